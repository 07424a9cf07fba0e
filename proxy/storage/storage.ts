// Every repository the proxy keeps its state in, on one backend, as one value: what createStorage
// (create-storage.ts) builds for OBV_STORAGE, and what a caller hands createObvProxy as `backend`.
import type { SyncStats } from './sqlite/wal-sync.ts';
import type { Store } from 'express-rate-limit';
import type { SessionStore } from './sessions.ts';
import type { ResultBus } from './result-bus.ts';
import type { EventOutbox } from './outbox.ts';
import type { OutcomeWriter } from './outcome-write.ts';
import type { PaymentStore } from './payments.ts';
import type { LinkSessionStore } from './link-sessions.ts';
import type { RemovalStore } from './removals.ts';

export type StorageKind = 'sqlite' | 'postgres' | 'redis' | 'memory';

/** Every repository the proxy keeps its state in, on one backend. */
export interface Storage {
  readonly kind: StorageKind;
  /** Sessions, their idempotency claims and their short-lived one-time markers. */
  sessionStore: SessionStore;
  /**
   * A notification's writes as one atomic step (outcome-write.ts); undefined = one call each
   * (`sequentialOutcomeWriter`). SQLite: one transaction and one fsync wait; PostgreSQL: one transaction.
   * A caller that replaces `sessionStore` or `eventOutbox` in a storage it hands over leaves this out, or
   * the writes skip its replacement.
   */
  outcomeWriter?: OutcomeWriter;
  /** Session events to whichever instance holds the browser's socket. */
  resultBus: ResultBus;
  /** The merchant events' outbox. */
  eventOutbox: EventOutbox;
  /** One payment per order, each claim a lease. */
  payments: PaymentStore;
  linkSessions: LinkSessionStore;
  /** Saved accounts shoppers removed. */
  removals: RemovalStore;
  /** A store for express-rate-limit, shared across instances; undefined = its in-memory default. */
  rateLimitStore?: Store;
  /** The failed API-key counts (http/merchant-auth.ts), shared across instances; undefined = in memory. */
  authFailureStore?: Store;
  /** Each event's redeliveries asked for (events/events.ts), shared across instances; undefined = in memory. */
  redeliveryStore?: Store;
  /**
   * Whether the outbox seals the merchant events it keeps (built with a sealing OutboxCodec: outbox.ts);
   * createObvProxy warns outside sandbox mode when a `backend` handed to it does not.
   */
  readonly sealsEvents?: boolean;
  /** Where the state is, for the boot log line (a directory, a database or Redis host, or "memory"). */
  readonly location: string;
  /**
   * SQLite only: fsyncs run so far and the acknowledgements that waited for one (storage/sqlite/wal-sync.ts;
   * the bench reads how many a notification costs).
   */
  readonly syncStats?: () => SyncStats;
  /** Closes what this function created. */
  close(): Promise<void>;
}
