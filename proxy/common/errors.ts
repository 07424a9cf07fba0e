// The proxy's error vocabulary: every problem kind it answers with (one row each below), one constructor
// for them (`problem`), and the class the single error handler in http/problem.ts writes as
// application/problem+json. Routes throw (or `next()`) problems; no route formats an error body itself.
import { SESSION_STORE_RETRY_AFTER_SECONDS, STORAGE_FULL_RETRY_AFTER_SECONDS } from '../config/limits.ts';

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
  /** RFC 9457 extension members a kind carries (e.g. `payment` on `order-already-paid`). */
  [extension: string]: unknown;
}

const PROBLEM_TYPE_PREFIX = 'urn:obv-link:problem:';

/**
 * Every kind of problem the proxy sends: by status, each slug (the type is `urn:obv-link:problem:{slug}`)
 * with its title. The merchant's own hooks may throw a `ProblemError` of a kind of their own; it is
 * answered as thrown.
 */
const KINDS_BY_STATUS = {
  // `bad-request`: a request body-parser could not read; sent with the 4xx body-parser reported.
  401: { unauthorized: 'Unauthorized' },
  // `bank-step-unbindable`: a start the binding cookie could not reach; `bank-step-unconfirmed`: a link
  // reference whose bank step the starting browser did not complete (docs/PROXY.md "Security notes").
  403: {
    forbidden: 'Forbidden',
    'bank-step-unbindable': 'Bank step cannot be bound',
    'bank-step-unconfirmed': 'Bank step not confirmed',
    'choice-unconfirmed': 'Saved account not confirmed',
  },
  // `link-session-required`: a start needs the merchant server's word (a link token, or its enrichStart hook).
  400: {
    validation: 'Invalid request',
    'bad-request': 'Bad request',
    'link-session-required': 'Link session required',
  },
  404: {
    'not-found': 'Not found',
    // An event id GET /events does not hold (never recorded, or past the 7-day retention).
    'unknown-event': 'Unknown event',
    'unknown-link-ref': 'Unknown link reference',
    'unknown-link-token': 'Unknown link token',
    'unknown-payment': 'No payment for this order',
    'unknown-saved-account': 'Unknown saved account',
  },
  // A saved account the shopper removed, passed back in a link session or paid with (storage/removals.ts).
  410: { 'link-token-expired': 'Link token expired', 'saved-account-removed': 'Saved account removed' },
  409: {
    conflict: 'Conflict',
    'link-token-used': 'Link token already used',
    'notification-mismatch': 'Notification for another verification',
    // The order was paid (or its payment's result is unknown): the body carries the first payment.
    'order-already-paid': 'Order already paid',
    'payment-in-progress': 'Payment in progress',
    // POST /transactions/{id}/reconcile of a payment that is not `unknown` (completed, or still at the provider).
    'payment-not-unknown': 'Payment result is not unknown',
  },
  413: { 'payload-too-large': 'Payload too large' },
  415: { 'unsupported-media-type': 'Unsupported media type' },
  422: {
    // The same Idempotency-Key again with a different body: a client bug, never a retry.
    'idempotency-key-reused': 'Idempotency-Key reused',
    'link-ref-mismatch': 'Link reference not valid for this payment',
    // A saved account passed back in a link session that does not open for its user (accounts/offer.ts).
    'saved-account-refused': 'Saved account refused',
    // Endpoint 4 answered one of OBV_REAUTHORIZATION_CODES: the shopper must reconnect the account (D20).
    'reauthorization-required': 'Re-authorization required',
    // A signed notification the proxy will not store (unknown status word, a success without a token).
    'unusable-notification': 'Notification not accepted',
    'upstream-rejected': 'Verification request rejected',
  },
  // `link-token-exhausted`: one link session's starts and choices are bounded (MAX_USES_PER_LINK_SESSION).
  429: { 'rate-limited': 'Too many requests', 'link-token-exhausted': 'Link token used too often' },
  500: {
    internal: 'Internal error',
    'outcome-hook-failed': 'Outcome not processed',
    'removal-hook-failed': 'Removal not processed',
  },
  502: {
    'upstream-auth': 'Verification service unavailable',
    'upstream-unavailable': 'Verification service unavailable',
  },
  // `outcome-in-progress`: another delivery of the same outcome holds the onOutcome lease.
  // `sealing-key-unavailable`: a stored credential sealed under a key this instance lacks (OBV_SEALING_KEYS).
  // `storage-full`: the disk holding the SQLite storage is full; nothing of the request was stored.
  503: {
    'session-store-unavailable': 'Session store unavailable',
    'storage-full': 'Storage full',
    'outcome-in-progress': 'Outcome being processed',
    'sealing-key-unavailable': 'Stored credential unavailable',
  },
  504: { 'upstream-timeout': 'Verification service timed out' },
} as const;

type KindsByStatus = typeof KINDS_BY_STATUS;
export type ProblemSlug = { [Status in keyof KindsByStatus]: keyof KindsByStatus[Status] }[keyof KindsByStatus];

/**
 * Extra headers a kind always carries. While the session store (Redis) cannot be reached, `Retry-After`
 * tells the provider (which retries its notification on any 5xx) and the browser that the same request
 * may succeed shortly.
 */
const KIND_HEADERS: Partial<Record<ProblemSlug, Record<string, string>>> = {
  'session-store-unavailable': { 'retry-after': String(SESSION_STORE_RETRY_AFTER_SECONDS) },
  'storage-full': { 'retry-after': String(STORAGE_FULL_RETRY_AFTER_SECONDS) },
  // The order's first payment is still at the provider: its result is readable within moments.
  'payment-in-progress': { 'retry-after': '1' },
};

/** slug → status and title, read off the table above. */
const KINDS = new Map<string, { status: number; title: string }>(
  Object.entries(KINDS_BY_STATUS).flatMap(([status, titles]) =>
    Object.entries(titles).map(([slug, title]): [string, { status: number; title: string }] => [
      slug,
      { status: Number(status), title },
    ]),
  ),
);

/** An error that knows its HTTP answer. Merchants may throw one from their hooks (it keeps its status). */
export class ProblemError extends Error {
  override name = 'ProblemError';
  readonly #headers: Record<string, string>;
  readonly #extensions: Record<string, unknown>;

  constructor(
    readonly status: number,
    /** Short slug; becomes `urn:obv-link:problem:{slug}`. */
    readonly slug: string,
    readonly title: string,
    detail: string,
    readonly errors?: FieldError[],
    options?: { cause?: unknown; headers?: Record<string, string>; extensions?: Record<string, unknown> },
  ) {
    super(detail, options);
    this.#headers = options?.headers ?? {};
    this.#extensions = options?.extensions ?? {};
  }

  /** Extra response headers this problem needs (e.g. `Retry-After`); none by default. */
  headers(): Record<string, string> {
    return { ...this.#headers };
  }

  toBody(): ProblemBody {
    const body: ProblemBody = {
      ...this.#extensions,
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
  /** Extension members of the body. */
  extensions?: Record<string, unknown>;
  /** Headers of this answer besides the kind's own (a `Retry-After` known only now). */
  headers?: Record<string, string>;
}

/** The problem of kind `slug`, with its status and title from the table and the kind's headers. */
export function problem(slug: ProblemSlug, detail: string, options: ProblemOptions = {}): ProblemError {
  const kind = KINDS.get(slug);
  if (!kind) throw new TypeError(`unknown problem kind ${slug}`);
  const headers = options.headers ? { ...KIND_HEADERS[slug], ...options.headers } : KIND_HEADERS[slug];
  return new ProblemError(options.status ?? kind.status, slug, kind.title, detail, options.errors, {
    ...('cause' in options ? { cause: options.cause } : {}),
    ...(headers ? { headers } : {}),
    ...(options.extensions ? { extensions: options.extensions } : {}),
  });
}
