// The seams between the proxy's routes/relay and where sessions live. Two implementations sit behind
// them: in memory (one instance, the default) and Redis (several instances, OBV_REDIS_URL). Routes and
// the relay only ever talk to these interfaces, so both backends must behave identically.

/** Where a verification session stands. `succeeded`, `failed` and `expired` are terminal. */
export type SessionState = 'pending' | 'returned' | 'succeeded' | 'failed' | 'expired';

export const TERMINAL_STATES: ReadonlySet<SessionState> = new Set(['succeeded', 'failed', 'expired']);

/** The outcome of one verification, as the browser receives it. */
export type VerificationOutcome =
  | {
      status: 'success';
      accountToken: string;
      accountLabel: string;
      fiName: string;
      fiAccountType: string;
    }
  | { status: 'failure'; code: string; message: string };

export interface SessionRecord {
  /** 128-bit random id, known only to the browser that started the session (and the merchant server). */
  sessionId: string;
  /** Separate unguessable reference carried in the per-session notification URL. */
  notificationRef: string;
  consumerUrl: string;
  state: SessionState;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds; after this the session reports `expired` unless it already settled. */
  expiresAt: number;
  outcome?: VerificationOutcome;
  /** Merchant ids sent upstream, kept for the transaction follow-on and for log correlation. */
  merchantUserId?: string;
  merchantTransactionId?: string;
}

/** Result of trying to record an outcome: only the first terminal outcome of a session is stored. */
export interface SettleResult {
  /** True when this call stored the outcome; false when one was already there (or the session expired). */
  stored: boolean;
  record: SessionRecord;
}

/**
 * Every method rejects with SessionBackendUnavailableError (sessions/errors.ts) when the backend cannot
 * be reached; the proxy answers that with 503 + Retry-After. Any other rejection is a 500.
 */
export interface SessionStore {
  create(record: SessionRecord): Promise<void>;
  /** The record, with `state` already `expired` if its time has passed and it never settled. */
  get(sessionId: string): Promise<SessionRecord | undefined>;
  sessionIdForNotificationRef(ref: string): Promise<string | undefined>;
  /** Atomically stores the first terminal outcome; durable before it resolves. */
  settle(sessionId: string, outcome: VerificationOutcome): Promise<SettleResult>;
  /** Moves `pending` → `returned` (the consumer came back from the bank). No-op in any other state. */
  markReturned(sessionId: string): Promise<SessionRecord | undefined>;
  /**
   * Idempotency for starts. Claims `key` for a new start and returns `{claimed: true}`, or returns the
   * sessionId a previous start with the same key produced (waiting for it if it is still in flight,
   * `undefined` sessionId if that start failed and the key was released).
   */
  claimIdempotencyKey(key: string, ttlMs: number): Promise<{ claimed: true } | { claimed: false; sessionId?: string }>;
  completeIdempotencyKey(key: string, sessionId: string, ttlMs: number): Promise<void>;
  releaseIdempotencyKey(key: string): Promise<void>;
  /** Webhook de-duplication: true the first time `webhookId` is seen within `ttlMs`. */
  rememberWebhookId(webhookId: string, ttlMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** A message the relay forwards to every subscriber of one session. */
export type SessionEvent =
  | { type: 'state'; sessionId: string; state: SessionState }
  | { type: 'result'; sessionId: string; outcome: VerificationOutcome }
  | { type: 'expired'; sessionId: string };

/**
 * Fan-out of session events to whichever instance holds the browser's socket. At-most-once (Redis
 * pub/sub is): the store is the source of truth, and the relay reads it on subscribe.
 */
export interface ResultBus {
  /** Rejects with SessionBackendUnavailableError when the backend cannot be reached. */
  publish(event: SessionEvent): Promise<void>;
  /** Returns the function that unsubscribes. Cost per published event must not grow with open sessions. */
  subscribe(sessionId: string, listener: (event: SessionEvent) => void): () => void;
  close(): Promise<void>;
}
