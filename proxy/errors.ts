// One hierarchy for every error the proxy turns into an HTTP response. Routes throw (or `next()`) these;
// the single error handler in http/problem.ts maps them — and the upstream errors — to
// application/problem+json, so no route formats an error body itself.

/** A field-level problem, in the `errors` array of a validation problem. */
export interface FieldError {
  /** Dotted path of the offending field (`consumer.email`), or the header name (`Idempotency-Key`). */
  path: string;
  message: string;
}

/** RFC 9457 problem details, as the proxy sends them. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
}

const PROBLEM_TYPE_PREFIX = 'urn:obv-link:problem:';

/** Base of every error that knows its HTTP status and problem type. */
export class ProblemError extends Error {
  override name = 'ProblemError';
  constructor(
    readonly status: number,
    /** Short slug; becomes `urn:obv-link:problem:{slug}`. */
    readonly slug: string,
    readonly title: string,
    detail: string,
    readonly errors?: FieldError[],
    options?: { cause?: unknown },
  ) {
    super(detail, options);
  }

  /** Extra response headers this problem needs (e.g. `Retry-After`); none by default. */
  headers(): Record<string, string> {
    return {};
  }

  toBody(): ProblemBody {
    const body: ProblemBody = {
      type: PROBLEM_TYPE_PREFIX + this.slug,
      title: this.title,
      status: this.status,
      detail: this.message,
    };
    if (this.errors && this.errors.length > 0) body.errors = this.errors;
    return body;
  }
}

export class ValidationProblem extends ProblemError {
  override name = 'ValidationProblem';
  constructor(detail: string, errors: FieldError[]) {
    super(400, 'validation', 'Invalid request', detail, errors);
  }
}

export class UnauthorizedProblem extends ProblemError {
  override name = 'UnauthorizedProblem';
  constructor(detail: string) {
    super(401, 'unauthorized', 'Unauthorized', detail);
  }
}

export class ForbiddenProblem extends ProblemError {
  override name = 'ForbiddenProblem';
  constructor(detail: string) {
    super(403, 'forbidden', 'Forbidden', detail);
  }
}

export class NotFoundProblem extends ProblemError {
  override name = 'NotFoundProblem';
  constructor(detail: string) {
    super(404, 'not-found', 'Not found', detail);
  }
}

export class ConflictProblem extends ProblemError {
  override name = 'ConflictProblem';
  constructor(detail: string) {
    super(409, 'conflict', 'Conflict', detail);
  }
}

/** The same Idempotency-Key again with a different body: a client bug, never a retry. */
export class IdempotencyKeyReusedProblem extends ProblemError {
  override name = 'IdempotencyKeyReusedProblem';
  constructor() {
    super(422, 'idempotency-key-reused', 'Idempotency-Key reused',
      'This Idempotency-Key was already used with a different request body; use a new key for a new request.',
      [{ path: 'Idempotency-Key', message: 'was already used with a different body' }]);
  }
}

export class PayloadTooLargeProblem extends ProblemError {
  override name = 'PayloadTooLargeProblem';
  constructor(limit: string | number) {
    super(413, 'payload-too-large', 'Payload too large', `The request body exceeds the limit of ${limit}.`);
  }
}

export class UnsupportedMediaTypeProblem extends ProblemError {
  override name = 'UnsupportedMediaTypeProblem';
  constructor(expected: string) {
    super(415, 'unsupported-media-type', 'Unsupported media type', `The request body must be ${expected}.`);
  }
}

export class TooManyRequestsProblem extends ProblemError {
  override name = 'TooManyRequestsProblem';
  constructor(detail = 'Too many verification requests from this address; try again later.') {
    super(429, 'rate-limited', 'Too many requests', detail);
  }
}

/** Seconds a client should wait before retrying while the session store is unavailable. */
export const SESSION_STORE_RETRY_AFTER_SECONDS = 5;

/**
 * 503 while the session store (Redis) cannot be reached. `Retry-After` tells the provider (which
 * retries its notification on any 5xx) and the browser that the same request may succeed shortly.
 */
export class SessionStoreUnavailableProblem extends ProblemError {
  override name = 'SessionStoreUnavailableProblem';
  constructor(options?: { cause?: unknown }) {
    super(503, 'session-store-unavailable', 'Session store unavailable',
      'The verification sessions cannot be read or stored right now; try again in a few seconds.', undefined, options);
  }

  override headers(): Record<string, string> {
    return { 'retry-after': String(SESSION_STORE_RETRY_AFTER_SECONDS) };
  }
}
