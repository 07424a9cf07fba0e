// The pieces every upstream client shares: joining the provider's base URL with an endpoint's path, turning
// ky's failures into the Upstream* errors, and the bearer hooks (attach the cached token; on a 401
// drop exactly that token and retry once with a fresh one).
import ky, { HTTPError, TimeoutError, type Hooks, type KyInstance, type Options } from 'ky';
import {
  TokenUnavailableError,
  UpstreamError,
  UpstreamHttpError,
  UpstreamTimeoutError,
  UpstreamUnreachableError,
} from './errors.ts';

/** Where the bearer comes from; the token manager implements it. */
export interface TokenSource {
  getToken(): Promise<string>;
  /** Forget `token` if it is the cached one (the provider rejected it). */
  invalidate(token: string): void;
}

/** `https://host/prefix/` + `/exp/...` → `https://host/prefix/exp/...`. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}

/** Reads a response body as JSON, or as text when it is not JSON, or undefined when empty/unreadable. */
export async function readBody(response: Response): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch {
    return undefined;
  }
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const NEVER_CONNECTED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function errorCodes(error: unknown): string[] {
  if (!(error instanceof Error)) return [];
  const cause = (error as { cause?: unknown }).cause;
  const own = (error as { code?: unknown }).code;
  const codes = typeof own === 'string' ? [own] : [];
  if (cause instanceof AggregateError) {
    for (const inner of cause.errors) codes.push(...errorCodes(inner));
  }
  if (cause instanceof Error) codes.push(...errorCodes(cause));
  return codes;
}

/**
 * True when fetch failed before a connection existed (refused, DNS), so the provider cannot have seen
 * the request and even a non-idempotent POST may be sent again.
 */
export function connectionNeverEstablished(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  const codes = errorCodes(error);
  return codes.length > 0 && codes.every((code) => NEVER_CONNECTED_CODES.has(code));
}

/** Turns whatever a ky call threw into one of the Upstream* errors (already-typed errors pass through). */
export async function toUpstreamError(error: unknown, method: string, url: string): Promise<Error> {
  if (error instanceof UpstreamError) return error;
  if (error instanceof HTTPError) {
    return new UpstreamHttpError(method, url, error.response.status, await readBody(error.response), { cause: error });
  }
  if (error instanceof TimeoutError) return new UpstreamTimeoutError(method, url, { cause: error });
  if (error instanceof TypeError) {
    const reason = errorCodes(error)[0] ?? error.message;
    return new UpstreamUnreachableError(method, url, reason, { cause: error });
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** Runs one call to the provider; whatever it throws comes out as one of the Upstream* errors. */
export async function callUpstream<T>(method: string, url: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw await toUpstreamError(error, method, url);
  }
}

/** Where an endpoint that needs a bearer is reached, and how long a call may take. */
export interface BearerClientOptions {
  tokens: TokenSource;
  timeoutMs: number;
}

/** A ky instance with the time-out, the bearer hooks and the endpoint's own retry policy. */
export function bearerClient(
  options: BearerClientOptions,
  policy: Pick<Options, 'retry' | 'throwHttpErrors'>,
): KyInstance {
  return ky.create({ timeout: options.timeoutMs, hooks: bearerHooks(options.tokens), ...policy });
}

/**
 * ky hooks that put `Authorization: Bearer …` on each request and, on a 401, drop that token and retry
 * once (the token may have been revoked or expired early on the provider's side). The retry is forced
 * with `ky.retry`, which bypasses the method/status retry rules, so it also applies to POSTs: a 401 means
 * the provider refused the request before acting on it.
 *
 * A token that cannot be had (endpoint 1 refused, failed or timed out, on the first attempt or on the
 * retry after a 401) stops the call before it is sent: it rejects as TokenUnavailableError, so a caller
 * that moves money knows the endpoint never saw the request.
 */
export function bearerHooks(tokens: TokenSource): Hooks {
  return {
    beforeRequest: [
      async (request) => {
        let token: string;
        try {
          token = await tokens.getToken();
        } catch (error) {
          throw new TokenUnavailableError(error instanceof Error ? error : new Error(String(error)));
        }
        request.headers.set('authorization', `Bearer ${token}`);
      },
    ],
    afterResponse: [
      (request, _options, response, state) => {
        if (response.status !== 401 || state.retryCount > 0) return undefined;
        const used = request.headers.get('authorization')?.replace(/^Bearer /, '');
        if (used) tokens.invalidate(used);
        return ky.retry({ delay: 0, code: 'TOKEN_REJECTED' });
      },
    ],
  };
}
