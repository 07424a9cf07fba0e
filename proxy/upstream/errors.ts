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
 * The token endpoint refused to issue a token (RFC 6749 §5.2). Subclasses name the `error` code; the
 * message says what the operator should change.
 */
export class TokenError extends UpstreamError {
  override name = 'TokenError';
  constructor(
    method: string,
    url: string,
    /** The RFC 6749 `error` code the provider sent (or `invalid_response` when there was none). */
    readonly code: string,
    /** The provider's `error_description`, if any. */
    readonly description: string | undefined,
    advice: string,
    options?: { cause?: unknown },
  ) {
    super(method, url, `token request failed with ${code}: ${advice}${description ? ` (provider said: ${description})` : ''}`, options);
  }
}

type TokenErrorArgs = [method: string, url: string, description: string | undefined, options?: { cause?: unknown }];

export class InvalidRequestTokenError extends TokenError {
  override name = 'InvalidRequestTokenError';
  constructor(...[method, url, description, options]: TokenErrorArgs) {
    super(method, url, 'invalid_request', description,
      'the token request was malformed; check OBV_BASE_URL points at the provider and OBV_TOKEN_SCOPE is right', options);
  }
}

export class InvalidClientTokenError extends TokenError {
  override name = 'InvalidClientTokenError';
  constructor(...[method, url, description, options]: TokenErrorArgs) {
    super(method, url, 'invalid_client', description, 'the configured OBV_CLIENT_ID/OBV_CLIENT_SECRET were rejected', options);
  }
}

export class InvalidGrantTokenError extends TokenError {
  override name = 'InvalidGrantTokenError';
  constructor(...[method, url, description, options]: TokenErrorArgs) {
    super(method, url, 'invalid_grant', description,
      "the provider revoked this client's authorization; ask the provider to restore it or issue new OBV_CLIENT_ID/OBV_CLIENT_SECRET", options);
  }
}

export class UnauthorizedClientTokenError extends TokenError {
  override name = 'UnauthorizedClientTokenError';
  constructor(...[method, url, description, options]: TokenErrorArgs) {
    super(method, url, 'unauthorized_client', description,
      'OBV_CLIENT_ID is not allowed to use the verification service; ask the provider to enable it', options);
  }
}

export class UnsupportedGrantTypeTokenError extends TokenError {
  override name = 'UnsupportedGrantTypeTokenError';
  constructor(...[method, url, description, options]: TokenErrorArgs) {
    super(method, url, 'unsupported_grant_type', description,
      'the provider does not accept the client_credentials grant at this URL; check OBV_BASE_URL', options);
  }
}

export class InvalidScopeTokenError extends TokenError {
  override name = 'InvalidScopeTokenError';
  constructor(...[method, url, description, options]: TokenErrorArgs) {
    super(method, url, 'invalid_scope', description, 'the provider rejected the requested scope; check OBV_TOKEN_SCOPE', options);
  }
}

/** Any other `error` code, or a 4xx without an RFC 6749 body. */
export class UnknownTokenError extends TokenError {
  override name = 'UnknownTokenError';
  constructor(method: string, url: string, code: string, description: string | undefined, options?: { cause?: unknown }) {
    super(method, url, code, description, 'the provider refused to issue a token', options);
  }
}

const TOKEN_ERROR_CLASSES: Record<string, new (...args: TokenErrorArgs) => TokenError> = {
  invalid_request: InvalidRequestTokenError,
  invalid_client: InvalidClientTokenError,
  invalid_grant: InvalidGrantTokenError,
  unauthorized_client: UnauthorizedClientTokenError,
  unsupported_grant_type: UnsupportedGrantTypeTokenError,
  invalid_scope: InvalidScopeTokenError,
};

/** The typed error for an RFC 6749 `error` code. */
export function tokenErrorFor(
  code: string,
  method: string,
  url: string,
  description: string | undefined,
  options?: { cause?: unknown },
): TokenError {
  const ErrorClass = Object.hasOwn(TOKEN_ERROR_CLASSES, code) ? TOKEN_ERROR_CLASSES[code] : undefined;
  return ErrorClass ? new ErrorClass(method, url, description, options) : new UnknownTokenError(method, url, code, description, options);
}
