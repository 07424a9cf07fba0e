// Every repository on one SQLite file, and its housekeeping (housekeeping.ts): the records past their
// retention deleted in small batches, the file given back its freed pages, the WAL truncated when idle.
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { MEMORY_SWEEP_INTERVAL_MS } from '../../config/limits.ts';
import type { LinkSessionStore } from '../link-sessions.ts';
import type { PaymentStore } from '../payments.ts';
import type { RemovalStore } from '../removals.ts';
import type { OutboxCodec } from '../outbox.ts';
import { explainOpenFailure, openSqliteDatabase, type SqliteHandle } from './database.ts';
import { Housekeeping, type SweepReport } from './housekeeping.ts';
import type { Fsync } from './wal-sync.ts';
import { SqliteSessionStore } from './session-store.ts';
import { SqliteEventOutbox } from './outbox.ts';
import { SqlitePaymentStore } from './payments.ts';
import { SqliteLinkSessionStore } from './link-sessions.ts';
import { SqliteRemovalStore } from './removals.ts';

export interface SqliteStorage {
  handle: SqliteHandle;
  sessionStore: SqliteSessionStore;
  eventOutbox: SqliteEventOutbox;
  payments: PaymentStore;
  linkSessions: LinkSessionStore;
  removals: RemovalStore;
  /**
   * Drops records past their retention, gives the freed pages back and, when idle, truncates the WAL
   * (runs on a timer; public for tests and the bench). Events are the outbox's own `trim`.
   */
  sweep(): Promise<SweepReport>;
  close(): Promise<void>;
}

export interface SqliteStorageOptions {
  now?: () => number;
  sweepIntervalMs?: number;
  /** Where a failed clean-up is reported. */
  logger?: Logger;
  /** How the WAL is flushed (tests); fs.fsync by default. */
  fsync?: Fsync;
  /** How the outbox keeps events at rest (storage/outbox.ts); default: in the clear. */
  outboxCodec?: OutboxCodec | undefined;
}

/** Opens the data directory's database; throws DataDirectoryError (database.ts) when it cannot be used. */
export function openSqliteStorage(dataDir: string, options: SqliteStorageOptions = {}): SqliteStorage {
  const handle = openSqliteDatabase(dataDir, { fsync: options.fsync });
  const now = options.now ?? Date.now;
  let repositories;
  try {
    // Their constructors clear what a process that is gone left behind: the first writes of a start.
    const eventOutbox = new SqliteEventOutbox(handle, { codec: options.outboxCodec });
    repositories = {
      // A notification's event is recorded in the same transaction as its outcome (outcome-write.ts).
      sessionStore: new SqliteSessionStore(handle, { now, events: eventOutbox }),
      eventOutbox,
      payments: new SqlitePaymentStore(handle, { now }),
      linkSessions: new SqliteLinkSessionStore(handle, { now }),
      removals: new SqliteRemovalStore(handle),
    };
  } catch (error) {
    handle.close();
    throw explainOpenFailure(error, dirname(handle.path));
  }
  const { sessionStore, eventOutbox } = repositories;
  const housekeeping = new Housekeeping(handle, { now, logger: options.logger });
  housekeeping.start(options.sweepIntervalMs ?? MEMORY_SWEEP_INTERVAL_MS);
  return {
    handle,
    ...repositories,
    sweep: () => housekeeping.sweep(),
    async close() {
      await housekeeping.close();
      // Stops a trim under way at its next step.
      await eventOutbox.close();
      await sessionStore.close();
      await handle.closeCheckpoints();
      handle.close();
    },
  };
}
