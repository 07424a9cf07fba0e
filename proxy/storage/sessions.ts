// Sessions as every backend stores them: the record, its outcome (the token sealed), its idempotency
// claims and its one-time markers, behind one interface (SessionStore) that memory/, sqlite/ and redis/
// implement alike (test/helpers/session-backend-contract.ts holds them to one behaviour). The result bus
// beside it carries what a browser may see of a session (result-bus.ts).
import type {
  ConsentRecord,
  ReconnectResult,
  ReconnectTarget,
  SavedAccount,
  StoredConsentRecord,
  StoredSavedAccount,
} from './saved-accounts.ts';

/** Where a verification session stands. `succeeded`, `failed` and `expired` are terminal. */
export type SessionState = 'pending' | 'returned' | 'succeeded' | 'failed' | 'expired';

export const TERMINAL_STATES: ReadonlySet<SessionState> = new Set(['succeeded', 'failed', 'expired']);

/** The failure code the proxy stores when the consumer cancels at the checkout (POST /sessions/cancel). */
export const CANCELLED_CODE = 'CANCELLED';

/** A failed verification, as the provider reported it (the browser sees the code and the proxy's words only). */
export interface FailureOutcome {
  status: 'failure';
  code: string;
  message: string;
}

/**
 * The outcome of one verification as the proxy stores it. The `accountToken` is the payment credential:
 * it stays on the server (store, `onOutcome`, the API-key routes) and never reaches a browser.
 */
export type VerificationOutcome =
  | {
      status: 'success';
      /** Opaque reference the browser gets instead of the token; only the merchant's server redeems it. */
      linkRef: string;
      accountToken: string;
      accountLabel: string;
      fiName: string;
      fiAccountType: string;
      /** The account saved for the merchant user (the shopper consented, or re-authorized it): for the merchant's server only. */
      savedAccount?: SavedAccount;
      /** A reconnect's success: the saved account it was for, and whether the bank linked another account. */
      reconnect?: ReconnectResult;
    }
  | FailureOutcome;

/**
 * An outcome as the session store keeps it: the success's accountToken sealed (sealed-outcome.ts), so no
 * backend, memory or Redis, ever holds the credential in the clear.
 */
export type StoredOutcome =
  | {
      status: 'success';
      linkRef: string;
      /** The accountToken, sealed for this session (AES-256-GCM under the configured sealing keys). */
      sealedAccountToken: string;
      accountLabel: string;
      fiName: string;
      fiAccountType: string;
      /** Its consent's address and user agent sealed for this session. */
      savedAccount?: StoredSavedAccount;
      reconnect?: ReconnectResult;
      accountToken?: never;
    }
  | FailureOutcome;

export interface SessionRecord {
  /** 128-bit random id, known only to the browser that started the session (and the merchant server). */
  sessionId: string;
  /** Separate unguessable reference carried in the per-session notification URL. */
  notificationRef: string;
  /** Separate unguessable reference carried in the per-session return URL (never the session id). */
  returnRef?: string;
  consumerUrl: string;
  state: SessionState;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds; after this the session reports `expired` unless it already settled. */
  expiresAt: number;
  outcome?: StoredOutcome;
  /**
   * What the verification was started for, as sent upstream: a notification must match it, and a link
   * reference only pays for this user, order and amount.
   */
  merchantUserId?: string;
  merchantTransactionId?: string;
  amount?: string;
  currency?: string;
  /** The provider's id of the verification, when endpoint 2 returned one. */
  verificationId?: string;
  /** `transaction.language` as sent upstream: the language of the words the browser gets (browserOutcome). */
  language?: string;
  /** The link session this verification was started from (its id, never the link token itself). */
  linkSessionId?: string;
  /** Started from a hosted page (its link can be forwarded): the session's link.* events say so. */
  hosted?: true;
  /**
   * The secret of the starting browser's binding cookie (http/bank-step-cookie.ts), when the bank step is
   * bound: the session's success is held back until that browser reaches the return page.
   */
  browserBinding?: string;
  /**
   * The SHA-256 of the one-time proof in a bound session's returnURL (verifications/return-proof.ts): the
   * browser that carries it and the binding cookie came back from the bank and started the session.
   */
  returnProof?: string;
  /**
   * A success here is saved for the merchant user: the new saved account's id, and the shopper's consent or a
   * re-authorization; `known`: the user's saved accounts the link session knew, whose id a success that
   * links one of them again keeps (accounts/saving.ts).
   */
  saving?: {
    accountId: string;
    consent?: StoredConsentRecord | ConsentRecord;
    reauthorized?: true;
    reconnect?: ReconnectTarget;
    known?: ReconnectTarget[];
  };
  /** Set when the shopper chose a saved account (no bank step): its stable id. */
  savedAccountId?: string;
  /**
   * A saved account chosen on a page: its page has the success at once, the merchant nothing (no event,
   * `onOutcome`, payment) until the shopper confirms it (the element's form submit or `confirm()`, the hosted
   * page's Continue; verifications/saved-choice.ts), so a page opened and left (a mail scanner, a link
   * preview) releases nothing.
   */
  awaitsConfirmation?: true;
}

/** Result of trying to record an outcome: only the first terminal outcome of a session is stored. */
export interface SettleResult {
  /** True when this call stored the outcome; false when one was already there (or the session expired). */
  stored: boolean;
  record: SessionRecord;
}

/**
 * A start's Idempotency-Key claim (verifications/idempotency.ts): in flight (a lease its start holds),
 * then the session it produced. Its own repository, served by each backend's session store.
 */
export interface IdempotencyStore {
  /**
   * Claims `key` for a new start and returns `{claimed: true}`, or returns the sessionId a previous start
   * with the same key produced (waiting for it if it is still in flight, `undefined` sessionId if that
   * start failed and the key was released, or its holder died and its lease ended).
   */
  claimIdempotencyKey(key: string, ttlMs: number): Promise<{ claimed: true } | { claimed: false; sessionId?: string }>;
  completeIdempotencyKey(key: string, sessionId: string, ttlMs: number): Promise<void>;
  releaseIdempotencyKey(key: string): Promise<void>;
}

/**
 * Short-lived one-time facts bound to a session (markers.ts names them all): never a business
 * record, which has a repository of its own (storage/).
 */
export interface MarkerStore {
  /**
   * Sets `key` to `value` unless it holds a value already, and resolves to the value it holds afterwards
   * (so `=== value` means this call set it). Shared by every instance.
   */
  mark(key: string, value: string, ttlMs: number): Promise<string>;
  /** The value of a marker, or undefined. */
  readMark(key: string): Promise<string | undefined>;
  /** Removes a marker (a lease given back, a step to be tried again). */
  unmark(key: string): Promise<void>;
}

/**
 * Sessions, as each backend stores them; the same object serves the session's idempotency claims and
 * markers. Every method rejects with SessionBackendUnavailableError (errors.ts) when the backend
 * cannot be reached; the proxy answers that with 503 + Retry-After. Any other rejection is a 500.
 */
export interface SessionStore extends IdempotencyStore, MarkerStore {
  create(record: SessionRecord): Promise<void>;
  /** The record, with `state` already `expired` if its time has passed and it never settled. */
  get(sessionId: string): Promise<SessionRecord | undefined>;
  /** The session a notification's URL names by its reference, as `get` reads it (in one read where the backend can). */
  getByNotificationRef(ref: string): Promise<SessionRecord | undefined>;
  /** Atomically stores the first terminal outcome; durable before it resolves. */
  settle(sessionId: string, outcome: StoredOutcome): Promise<SettleResult>;
  /** Moves `pending` → `returned` (the consumer came back from the bank). No-op in any other state. */
  markReturned(sessionId: string): Promise<SessionRecord | undefined>;
  /**
   * Deletes every session started for `merchantUserId` (outcome, saved account, consent and all) and
   * resolves to them, as they were; durable before it resolves. A second call finds none.
   */
  forgetUser(merchantUserId: string): Promise<SessionRecord[]>;
  close(): Promise<void>;
}
