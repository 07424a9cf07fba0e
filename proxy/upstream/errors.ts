// Errors of the calls to the provider. One class per failure kind, each with the method and URL in
// its message and the original error as `cause` (non-enumerable, so a logger that serialises the
// error's own properties never walks into ky's request options). No message ever contains the
// client secret or a bearer token: URLs carry neither, and bodies are not echoed.

/** Base of every failure talking to the provider. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    readonly method: string,
    readonly url: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${method} ${url}: ${message}`, options);
  }
}

/** The provider answered with a non-2xx status (after any retry). `body` is the parsed JSON, if any. */
export class UpstreamHttpError extends UpstreamError {
  override name = 'UpstreamHttpError';
  constructor(
    method: string,
    url: string,
    readonly status: number,
    readonly body: unknown,
    options?: { cause?: unknown },
  ) {
    super(method, url, `the provider answered HTTP ${status}`, options);
  }
}

/** No answer within the configured time-out (OBV_UPSTREAM_TIMEOUT). */
export class UpstreamTimeoutError extends UpstreamError {
  override name = 'UpstreamTimeoutError';
  constructor(method: string, url: string, options?: { cause?: unknown }) {
    super(method, url, 'the provider did not answer in time (OBV_UPSTREAM_TIMEOUT)', options);
  }
}

/** The connection failed (DNS, refused, reset, TLS). */
export class UpstreamUnreachableError extends UpstreamError {
  override name = 'UpstreamUnreachableError';
  constructor(method: string, url: string, reason: string, options?: { cause?: unknown }) {
    super(method, url, `the provider could not be reached (${reason}); check OBV_BASE_URL / OBV_GATEWAY_URL`, options);
  }
}

/** A 2xx whose body is not what the provider promises (docs/UPSTREAM.md). */
export class UpstreamResponseError extends UpstreamError {
  override name = 'UpstreamResponseError';
  constructor(method: string, url: string, problem: string, options?: { cause?: unknown }) {
    super(method, url, `unexpected response from the provider: ${problem}`, options);
  }
}

/**
 * No bearer token could be had for a call to endpoint 2 or 4: endpoint 1 refused (a TokenError), failed
 * (5xx), did not answer in time or could not be reached. That call was therefore never sent, which is
 * what a payment needs to know (payments/submit.ts: the order is free again); `cause` is endpoint 1's
 * own error, which is what the caller is answered with (http/problem.ts).
 */
export class TokenUnavailableError extends UpstreamError {
  override name = 'TokenUnavailableError';
  declare readonly cause: Error;
  constructor(cause: Error) {
    super(
      cause instanceof UpstreamError ? cause.method : 'POST',
      cause instanceof UpstreamError ? cause.url : 'token endpoint',
      `no access token, so the call was not sent (${cause.message})`,
      { cause },
    );
  }
}

/** The RFC 6749 §5.2 `error` codes the proxy tells apart; any other code is `unknown`. */
export type TokenErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unknown';

/** What the operator should change, for each code. */
const TOKEN_ERROR_ADVICE: Record<TokenErrorCode, string> = {
  invalid_request:
    'the token request was malformed; check OBV_BASE_URL points at the provider and OBV_TOKEN_SCOPE is right',
  invalid_client: 'the configured OBV_CLIENT_ID/OBV_CLIENT_SECRET were rejected',
  invalid_grant:
    "the provider revoked this client's authorization; ask the provider to restore it or issue new OBV_CLIENT_ID/OBV_CLIENT_SECRET",
  unauthorized_client: 'OBV_CLIENT_ID is not allowed to use the verification service; ask the provider to enable it',
  unsupported_grant_type: 'the provider does not accept the client_credentials grant at this URL; check OBV_BASE_URL',
  invalid_scope: 'the provider rejected the requested scope; check OBV_TOKEN_SCOPE',
  unknown: 'the provider refused to issue a token',
};

function tokenErrorCode(sent: string): TokenErrorCode {
  return Object.hasOwn(TOKEN_ERROR_ADVICE, sent) ? (sent as TokenErrorCode) : 'unknown';
}

/** The token endpoint refused to issue a token (RFC 6749 §5.2); the message says what to change. */
export class TokenError extends UpstreamError {
  override name = 'TokenError';
  /** The code as the proxy understands it; `unknown` for any code it does not know. */
  readonly code: TokenErrorCode;

  constructor(
    method: string,
    url: string,
    /** The `error` the provider sent, or `http_<status>` for a 4xx without an RFC 6749 body. */
    readonly sentCode: string,
    /** The provider's `error_description`, if any. */
    readonly description: string | undefined,
    options?: { cause?: unknown },
  ) {
    const code = tokenErrorCode(sentCode);
    const advice = TOKEN_ERROR_ADVICE[code];
    super(
      method,
      url,
      `token request failed with ${sentCode}: ${advice}${description ? ` (provider said: ${description})` : ''}`,
      options,
    );
    this.code = code;
  }
}
