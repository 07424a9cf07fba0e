// Endpoint 1: the OAuth 2.0 client-credentials token, cached until shortly before `expires_in`, with
// one request in flight at a time however many callers want a token at once.
import ky, { HTTPError } from 'ky';
import { z } from 'zod';
import type { Logger } from 'pino';
import { joinUrl, toUpstreamError, type TokenSource } from './http.ts';
import { TokenError, UpstreamResponseError } from './errors.ts';

export const TOKEN_PATH = '/exp/auth/mint/v1/oauth2/token';

/** The token response (docs/UPSTREAM.md#endpoint-1-token). */
export const TokenResponse = z.object({
  access_token: z.string().min(1),
  expires_in: z.coerce.number().int().positive(),
  token_type: z.string().regex(/^bearer$/i, 'token_type must be Bearer'),
});
export type TokenResponse = z.infer<typeof TokenResponse>;

const TokenErrorBody = z.object({ error: z.string().min(1), error_description: z.string().optional() });

export interface TokenManagerOptions {
  /** `{base_url}`: host of endpoints 1 and 2 (docs/UPSTREAM.md#hosts-and-transport). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  timeoutMs: number;
  /** Retries on 5xx, time-outs and connection errors (minting a token twice is harmless). Default 2. */
  retryLimit?: number;
  /** Delay before the first retry; doubles each time. Default 200 ms. */
  retryDelayMs?: number;
  logger: Logger;
  /** Wraps each token request (retries included), e.g. to time and count it for metrics. */
  observe?: <T>(request: () => Promise<T>) => Promise<T>;
  /** Clock, for tests. */
  now?: () => number;
}

/**
 * Supplies bearer tokens for endpoints 2 and 4. A token is reused until `refreshMargin` before it
 * expires (10 % of its lifetime, at most 60 s), so a call never goes out with a token about to lapse.
 */
export class TokenManager implements TokenSource {
  readonly #options: TokenManagerOptions;
  readonly #url: string;
  readonly #now: () => number;
  #cached: { token: string; refreshAt: number } | undefined;
  #inFlight: Promise<string> | undefined;

  constructor(options: TokenManagerOptions) {
    this.#options = options;
    this.#url = joinUrl(options.baseUrl, TOKEN_PATH);
    this.#now = options.now ?? Date.now;
  }

  /** A valid token: the cached one, the one being fetched, or a new one. */
  getToken(): Promise<string> {
    if (this.#cached && this.#now() < this.#cached.refreshAt) return Promise.resolve(this.#cached.token);
    const observe = this.#options.observe ?? ((request) => request());
    this.#inFlight ??= observe(() => this.#requestToken()).finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  invalidate(token: string): void {
    if (this.#cached?.token === token) {
      this.#cached = undefined;
      this.#options.logger.info('upstream rejected the cached access token; a new one will be requested');
    }
  }

  async #requestToken(): Promise<string> {
    const { clientId, clientSecret, scope, timeoutMs, retryLimit = 2, retryDelayMs = 200 } = this.#options;
    // RFC 6749 §2.3.1: id and secret are form-urlencoded before the Basic encoding.
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
    const url = `${this.#url}?${new URLSearchParams({ grant_type: 'client_credentials', scope })}`;
    let body: unknown;
    try {
      const response = await ky.post(url, {
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: '',
        timeout: timeoutMs,
        retry: {
          limit: retryLimit,
          methods: ['post'],
          statusCodes: [500, 502, 503, 504],
          retryOnTimeout: true,
          delay: (attempt) => retryDelayMs * 2 ** (attempt - 1),
        },
      });
      body = await response.json();
    } catch (error) {
      throw await this.#typedError(error, url);
    }
    const parsed = TokenResponse.safeParse(body);
    if (!parsed.success) {
      throw new UpstreamResponseError(
        'POST',
        url,
        `token response invalid (${z.prettifyError(parsed.error).replaceAll('\n', '; ')})`,
      );
    }
    const lifetimeMs = parsed.data.expires_in * 1000;
    const margin = Math.min(60_000, lifetimeMs * 0.1);
    this.#cached = { token: parsed.data.access_token, refreshAt: this.#now() + lifetimeMs - margin };
    this.#options.logger.debug({ expiresIn: parsed.data.expires_in }, 'obtained upstream access token');
    return parsed.data.access_token;
  }

  async #typedError(error: unknown, url: string): Promise<Error> {
    if (error instanceof HTTPError && error.response.status >= 400 && error.response.status < 500) {
      let json: unknown;
      try {
        json = await error.response.json();
      } catch {
        json = undefined;
      }
      const rfc = TokenErrorBody.safeParse(json);
      if (rfc.success) return new TokenError('POST', url, rfc.data.error, rfc.data.error_description, { cause: error });
      return new TokenError('POST', url, `http_${error.response.status}`, undefined, { cause: error });
    }
    return toUpstreamError(error, 'POST', url);
  }
}
