// Every key and channel the Redis backend uses, in one place, under one configurable prefix so several
// deployments (or a test run) can share one Redis without seeing each other's data.

import { DEFAULT_REDIS_PREFIX } from '../../config/limits.ts';

export interface RedisKeys {
  readonly prefix: string;
  /** Hash: `base` (immutable record JSON), `state`, `outcome` (JSON), `expiresAt`. */
  session(sessionId: string): string;
  /** String: the sessionId that owns a notification reference. */
  notificationRef(ref: string): string;
  /** String: `pending` while a start runs, then `session:{sessionId}`. */
  idempotency(key: string): string;
  /** String: a one-time marker of the session store (`mark`/`readMark`/`unmark`). */
  mark(key: string): string;
  /** Key prefix handed to one express-rate-limit store (one per limiter: they must not share keys). */
  rateLimit(limiterName: string): string;
  /** The one pub/sub channel carrying every session event. */
  readonly eventsChannel: string;
  /** Merchant events (outbox.ts): one hash per event (`event`, `seq`, `attempts`, `status` and where its delivery stands). */
  merchantEvent(eventId: string): string;
  /** Sorted set: event id → its sequence number, the order `GET /events` lists. */
  readonly merchantEventLog: string;
  /** Counter: the last sequence number given. */
  readonly merchantEventSeq: string;
  /** Sorted set: outbox job → when it is due (or when its lease ends). */
  readonly merchantEventJobs: string;
  /** Sorted set: pending event id → since when it has been pending (the backlog metrics). */
  readonly merchantEventsPending: string;
  /** Sorted set: pending event id → its sequence number (GET /events?delivery=pending, undelivered). */
  readonly merchantEventsPendingSeq: string;
  /** Sorted set: given-up event id → its sequence number (GET /events?delivery=failed, undelivered). */
  readonly merchantEventsFailedSeq: string;
  /** A set: the ids of the events naming the user with this tag (storage/outbox.ts OutboxCodec), forgetUser's lookup. */
  merchantEventsOfUser(userTag: string): string;
  /** String: an order's payment record (JSON, storage/payments.ts), kept for the payment retention. */
  payment(merchantTransactionId: string): string;
  /** String: the order an Idempotency-Key of POST /transactions was first used for (kept as long as its payment). */
  paymentKey(idempotencyKey: string): string;
  /** List: an order's earlier payments (JSON, each reconciled `not-charged`, then replaced), oldest first; kept for the payment retention. */
  earlierPayments(merchantTransactionId: string): string;
  /** String: the installation's generation mark (storage/redis/guard.ts): gone means this Redis lost its data. */
  readonly generation: string;
  /** Counter: written before a replayed answer waits for the replicas (storage/redis/replicas.ts `fence`). */
  readonly replicaFence: string;
  /** Sorted set: order with a `pending` payment → when its lease ends. */
  readonly paymentLeases: string;
  /** String: a link session's record (JSON, storage/link-sessions.ts) under its id (a hash of its token). */
  linkSession(id: string): string;
  /** Counter: the uses (starts, saved accounts chosen) of a link session, with its TTL. */
  linkSessionUses(id: string): string;
  /** String: a saved account the shopper removed (JSON, storage/removals.ts); kept for good. */
  removal(merchantUserId: string, accountId: string): string;
}

/** Key names under `prefix` (default `obv:`). */
export function redisKeys(prefix: string = DEFAULT_REDIS_PREFIX): RedisKeys {
  return {
    prefix,
    session: (sessionId) => `${prefix}session:${sessionId}`,
    notificationRef: (ref) => `${prefix}ref:${ref}`,
    idempotency: (key) => `${prefix}idem:${key}`,
    mark: (key) => `${prefix}mark:${key}`,
    rateLimit: (limiterName) => `${prefix}rl:${limiterName}:`,
    eventsChannel: `${prefix}events`,
    merchantEvent: (eventId) => `${prefix}evt:${eventId}`,
    merchantEventLog: `${prefix}evt-log`,
    merchantEventSeq: `${prefix}evt-seq`,
    merchantEventJobs: `${prefix}evt-jobs`,
    merchantEventsPending: `${prefix}evt-pending`,
    merchantEventsPendingSeq: `${prefix}evt-pending-seq`,
    merchantEventsFailedSeq: `${prefix}evt-failed-seq`,
    merchantEventsOfUser: (userTag) => `${prefix}evt-user:${userTag}`,
    payment: (merchantTransactionId) => `${prefix}payment:${merchantTransactionId}`,
    paymentLeases: `${prefix}payment-leases`,
    generation: `${prefix}generation`,
    replicaFence: `${prefix}replica-fence`,
    earlierPayments: (merchantTransactionId) => `${prefix}payment-earlier:${merchantTransactionId}`,
    paymentKey: (idempotencyKey) => `${prefix}payment-key:${idempotencyKey}`,
    linkSession: (id) => `${prefix}link-session:${id}`,
    linkSessionUses: (id) => `${prefix}link-session-uses:${id}`,
    // JSON, so no user id can be spelled to collide with another user's account.
    removal: (merchantUserId, accountId) => `${prefix}removal:${JSON.stringify([merchantUserId, accountId])}`,
  };
}
