// The proxy's fixed limits and timings, in one place beside the configuration schema (schema.ts). What
// an operator may change is a setting there; what is here is a decision of the product, named so a
// reader finds each figure, and why it is what it is, without searching the routes for literals.

const SECOND_MS = 1_000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;

// ── Request bodies ───────────────────────────────────────────────────────────────────────────────
/** Largest JSON body of POST /verifications (a start: a few short fields). */
export const START_BODY_LIMIT = '16kb';
/** Largest JSON body of POST /transactions (the merchant server's payment request). */
export const TRANSACTION_BODY_LIMIT = '16kb';
/** Largest notification body, in bytes: the provider's signed outcome, with room for its extra fields. */
export const NOTIFICATION_BODY_LIMIT_BYTES = 64 * 1024;

// ── Rate limits ──────────────────────────────────────────────────────────────────────────────────
/** Window of the per-address start limit (`rateLimit` starts per window). */
export const START_RATE_WINDOW_MS = MINUTE_MS;
/**
 * Saved-account choices and removals (POST /saved-accounts/use, /remove) per client address per minute.
 * Their own limit, not the starts' (`rateLimit`, 30): each click or arrow key on a saved account is a
 * choice, and a shopper toggling between accounts must never meet it (the element sends one at a time);
 * no upstream call is behind one, and a link session allows MAX_USES_PER_LINK_SESSION in all. Counted per
 * instance.
 */
export const SAVED_ACCOUNT_CHOICES_PER_MINUTE = 240;
/** Window of the failed API-key limit (`authFailureLimit` refused keys per window). */
export const AUTH_FAILURE_WINDOW_MS = 15 * MINUTE_MS;
/**
 * The highest value of each configurable limit that still limits something (config/warnings.ts says so
 * at boot above it): a shopper starts a few verifications a minute and holds a socket or two; a merchant's
 * server gets its key right after a few tries; a deployment's sockets are bounded by its open files. A
 * limit of 1,000,000 is a limit switched off without saying so.
 */
export const SANE_LIMITS = {
  /** OBV_RATE_LIMIT: starts per client address per minute (ten a second). */
  rateLimit: 600,
  /** OBV_AUTH_FAILURE_LIMIT: refused API keys per client address per AUTH_FAILURE_WINDOW_MS. */
  authFailureLimit: 100,
  /** OBV_WS_MAX_PER_SESSION: a session is watched by one checkout tab (a few after reloads). */
  maxSocketsPerSession: 64,
  /** OBV_WS_MAX_PER_CLIENT: one address, a whole office behind one NAT included. */
  maxSocketsPerClient: 10_000,
  /** OBV_WS_MAX_TOTAL: one instance's sockets, each a file descriptor (also never above the file limit). */
  maxSockets: 100_000,
} as const;

// ── Sessions and notifications ───────────────────────────────────────────────────────────────────
/**
 * Both session backends keep a record this long after it expires, so a late reload still reads
 * `expired` or its outcome instead of a 404; markers bound to a session live as long.
 */
export const RECORD_GRACE_MS = HOUR_MS;
/**
 * The longest a link token may start verifications (OBV_LINK_SESSION_TTL). A link session is one checkout
 * page: a day covers a shopper who leaves the page open overnight, and a bound keeps a leaked token's
 * use short and the link session far inside the payment retention (schema.ts: its order is paid once
 * only while the payment is remembered).
 */
export const LINK_SESSION_TTL_MAX_MS = 24 * HOUR_MS;
/** Seen webhook-ids are remembered this long (well past the provider's retry window). */
export const WEBHOOK_ID_TTL_MS = 24 * HOUR_MS;
/**
 * How long one delivery holds the right to call `onOutcome`: a concurrent or retried delivery meanwhile
 * gets a 503 (the provider retries) instead of a second call; an instance that died mid-call frees it then.
 */
export const OUTCOME_HOOK_LEASE_MS = 2 * MINUTE_MS;
/**
 * OBV_BIND_BANK_STEP: how long after a success arrives a return by the starting browser WITHOUT the return
 * URL's proof must wait before it confirms the bank step, so the bank's redirect of the browser that
 * actually signed in (which may reach the proxy a little after the provider's notification) wins over a
 * starter who polls the return page (verifications/bank-step.ts). Its return page shows "Finishing…"
 * meanwhile. A return with the proof (the honest shopper) confirms at once and never waits for it.
 */
export const BANK_STEP_RETURN_GRACE_MS = 10_000;
/** How often the return page's "Finishing…" reloads itself (seconds). */
export const BANK_STEP_FINISHING_REFRESH_SECONDS = 2;
/** `Retry-After` (seconds) of the 503 answered while the session store (Redis) cannot be reached. */
export const SESSION_STORE_RETRY_AFTER_SECONDS = 5;
/**
 * `Retry-After` (seconds) of the 503 answered while the storage's disk is full: space returns when an
 * operator frees it, rarely within seconds, so retrying sooner only adds load.
 */
export const STORAGE_FULL_RETRY_AFTER_SECONDS = 30;
/** How often the in-memory store drops records past their grace. */
export const MEMORY_SWEEP_INTERVAL_MS = MINUTE_MS;
/** The SQLite storage's directory when OBV_DATA_DIR is not set (relative to the working directory). */
export const DEFAULT_DATA_DIR = 'obv-link-data';
/** The default prefix of every Redis key and channel (the `redisPrefix` setting's default). */
export const DEFAULT_REDIS_PREFIX = 'obv:';

/** How long a Redis money write waits for its replicas by default (`redisReplicaTimeoutMs`): a healthy one answers in a millisecond or two. */
export const DEFAULT_REDIS_REPLICA_TIMEOUT_MS = 1_000;
/**
 * The PostgreSQL storage's defaults (storage/postgres/): its schema, the connections per instance (the
 * pool; the relay's listener is one more), the longest a statement may run and the longest a request
 * waits for a connection before answering 503.
 */
export const POSTGRES_DEFAULTS = {
  schema: 'obv_link',
  poolSize: 10,
  statementTimeoutMs: 5 * SECOND_MS,
  connectTimeoutMs: 2 * SECOND_MS,
} as const;
/** A PostgreSQL schema name the proxy accepts: a plain lower-case SQL name, so it needs no quoting anywhere. */
export const POSTGRES_SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

// ── Merchant events (proxy/events/) ─────────────────────────────────────────────────────────────
/** How long events stay listed in GET /events (the issue asks for at least 7 days). */
export const EVENT_RETENTION_MS = 7 * 24 * HOUR_MS;
/**
 * Waits between delivery attempts: the first is at once, then these (Standard Webhooks' schedule), about
 * 27.5 hours in all, so an endpoint down for a day still gets every event; after the last the event is
 * marked failed (it stays listed).
 */
export const EVENT_RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND_MS,
  5 * MINUTE_MS,
  30 * MINUTE_MS,
  2 * HOUR_MS,
  5 * HOUR_MS,
  10 * HOUR_MS,
  10 * HOUR_MS,
];
/** One delivery attempt gets this long to be answered; no answer counts as a failure and is retried. */
export const EVENT_ATTEMPT_TIMEOUT_MS = 10 * SECOND_MS;
/** A claimed job is this instance's for this long (longer than an attempt); a killed instance's job comes back then. */
export const EVENT_LEASE_MS = 30 * SECOND_MS;
/** How often each instance looks for due jobs (new events are also sent at once by the instance that recorded them). */
export const EVENT_POLL_INTERVAL_MS = SECOND_MS;
/** How often each instance drops events past the retention from the list. */
export const EVENT_TRIM_INTERVAL_MS = MINUTE_MS;
/** Deliveries one instance runs at once. */
export const EVENT_MAX_IN_FLIGHT = 32;
/**
 * A session's end is checked this long after it expires (to emit `link.expired`): a margin for instances
 * whose clocks differ a little, so a success stored just before the expiry on another instance wins.
 */
export const SESSION_CHECK_DELAY_MS = 5 * SECOND_MS;
/**
 * Redeliveries one event may be asked for per REDELIVERY_WINDOW_MS (POST /events/{id}/redeliver,
 * `proxy.redeliverEvent`), across instances on Redis: enough to resend an event after fixing an endpoint,
 * and no way to turn the proxy into a loop of signed POSTs at the merchant's endpoint (100 asks made 67
 * deliveries). More are refused 429 `rate-limited` with `Retry-After`.
 */
export const REDELIVERIES_PER_EVENT = 5;
export const REDELIVERY_WINDOW_MS = 15 * MINUTE_MS;

// ── WebSocket relay (each overridable through `createObvProxy({ relay })` for tests and benchmarks) ─
/** A socket that has not subscribed by then is closed (4408). */
export const RELAY_SUBSCRIBE_TIMEOUT_MS = 5 * SECOND_MS;
/** Heartbeat period; a socket that misses one pong is terminated. */
export const RELAY_PING_INTERVAL_MS = 30 * SECOND_MS;
/** How soon an expiry check that could not read the store is tried again. */
export const RELAY_EXPIRY_RETRY_MS = 5 * SECOND_MS;
/** How often a waiting session is re-read, in case its published result never reached this instance. */
export const RELAY_RECHECK_INTERVAL_MS = MINUTE_MS;
/** Largest client message (the one subscribe message). */
export const RELAY_MAX_PAYLOAD_BYTES = 1024;
/** How long a socket closed by the server (a cap, a replacement) may take to answer before it is cut. */
export const RELAY_CLOSE_GRACE_MS = SECOND_MS;
/** On close, how long the relay waits for the close handshakes before cutting what is left. */
export const RELAY_SHUTDOWN_WAIT_MS = 500;

// ── Logs ─────────────────────────────────────────────────────────────────────────────────────────
/** Longest attacker-controlled string a log line carries. */
export const LOGGED_VALUE_MAX = 80;
/** A rate-limited warning is written at most once per key per this period. */
export const WARNING_INTERVAL_MS = MINUTE_MS;
/** Distinct warning keys remembered; beyond this every key shares one budget. */
export const WARNING_MAX_KEYS = 1_000;

// ── Payments (proxy/payments/) ───────────────────────────────────────────────────────────────────
/** Upstream calls one payment may make in the worst case: a token, the transaction, and both again after a 401. */
export const UPSTREAM_CALLS_PER_PAYMENT = 4;
/** Added to a payment's lease: instances' clocks may differ a little (as SESSION_CHECK_DELAY_MS). */
export const PAYMENT_LEASE_MARGIN_MS = 5 * SECOND_MS;
/** How often each instance looks for payments whose lease ended (their holder died). */
export const PAYMENT_LEASE_CHECK_INTERVAL_MS = SECOND_MS;
/** Payments turned `unknown` per look (the rest wait for the next one). */
export const PAYMENT_LEASE_CHECK_BATCH = 50;

// ── Link sessions (proxy/link-sessions/) ─────────────────────────────────────────────────────────
/**
 * Starts and saved-account choices one link session allows: room for a shopper's retries and changes of
 * account (each click on a saved account is a choice), while a leaked link token cannot make thousands of
 * sessions, events and upstream calls. A reload of the checkout gets a new link session from the shop.
 */
export const MAX_USES_PER_LINK_SESSION = 50;
