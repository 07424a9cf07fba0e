// The proxy's error vocabulary: every problem kind it answers with (one row each below), one constructor
// for them (`problem`), and the class the single error handler in http/problem.ts writes as
// application/problem+json. Routes throw (or `next()`) problems; no route formats an error body itself.

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

/** Seconds a client should wait before retrying while the session store is unavailable. */
export const SESSION_STORE_RETRY_AFTER_SECONDS = 5;

interface ProblemKind {
  status: number;
  title: string;
  /** Extra response headers every problem of this kind carries. */
  headers?: Record<string, string>;
}

/**
 * Every kind of problem the proxy sends, by slug (the type is `urn:obv-link:problem:{slug}`). The
 * merchant's own hooks may throw a `ProblemError` of a kind of their own; it is answered as thrown.
 */
export const PROBLEM_KINDS = {
  validation: { status: 400, title: 'Invalid request' },
  /** A request body-parser could not read; the status is the 4xx it reported. */
  'bad-request': { status: 400, title: 'Bad request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not found' },
  'unknown-link-ref': { status: 404, title: 'Unknown link reference' },
  conflict: { status: 409, title: 'Conflict' },
  'link-ref-used': { status: 409, title: 'Link reference already used' },
  'notification-mismatch': { status: 409, title: 'Notification for another verification' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  /** The same Idempotency-Key again with a different body: a client bug, never a retry. */
  'idempotency-key-reused': { status: 422, title: 'Idempotency-Key reused' },
  'link-ref-refused': { status: 422, title: 'Cannot re-verify this account' },
  'link-ref-mismatch': { status: 422, title: 'Link reference not valid for this payment' },
  /** A signed notification the proxy will not store (unknown status word, a success without a token). */
  'unusable-notification': { status: 422, title: 'Notification not accepted' },
  'upstream-rejected': { status: 422, title: 'Verification request rejected' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  internal: { status: 500, title: 'Internal error' },
  'outcome-hook-failed': { status: 500, title: 'Outcome not processed' },
  'upstream-auth': { status: 502, title: 'Verification service unavailable' },
  'upstream-unavailable': { status: 502, title: 'Verification service unavailable' },
  /**
   * The session store (Redis) cannot be reached. `Retry-After` tells the provider (which retries its
   * notification on any 5xx) and the browser that the same request may succeed shortly.
   */
  'session-store-unavailable': {
    status: 503,
    title: 'Session store unavailable',
    headers: { 'retry-after': String(SESSION_STORE_RETRY_AFTER_SECONDS) },
  },
  /** Another delivery of the same outcome holds the onOutcome lease; the provider retries. */
  'outcome-in-progress': { status: 503, title: 'Outcome being processed' },
  'upstream-timeout': { status: 504, title: 'Verification service timed out' },
} as const satisfies Record<string, ProblemKind>;

export type ProblemSlug = keyof typeof PROBLEM_KINDS;

/** An error that knows its HTTP answer. Merchants may throw one from their hooks (it keeps its status). */
export class ProblemError extends Error {
  override name = 'ProblemError';
  readonly #headers: Record<string, string>;

  constructor(
    readonly status: number,
    /** Short slug; becomes `urn:obv-link:problem:{slug}`. */
    readonly slug: string,
    readonly title: string,
    detail: string,
    readonly errors?: FieldError[],
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(detail, options);
    this.#headers = options?.headers ?? {};
  }

  /** Extra response headers this problem needs (e.g. `Retry-After`); none by default. */
  headers(): Record<string, string> {
    return { ...this.#headers };
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

export interface ProblemOptions {
  /** The fields at fault (a validation problem names every one). */
  errors?: FieldError[] | undefined;
  cause?: unknown;
  /** Only for `bad-request`: the 4xx a library reported instead of the kind's 400. */
  status?: number;
}

/** The problem of kind `slug`, with its status, title and headers from PROBLEM_KINDS. */
export function problem(slug: ProblemSlug, detail: string, options: ProblemOptions = {}): ProblemError {
  const kind: ProblemKind = PROBLEM_KINDS[slug];
  return new ProblemError(options.status ?? kind.status, slug, kind.title, detail, options.errors, {
    ...('cause' in options ? { cause: options.cause } : {}),
    ...(kind.headers ? { headers: kind.headers } : {}),
  });
}
