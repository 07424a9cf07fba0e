// Every repository on one SQLite file, and the sweep that drops what is past its retention.
import type { SessionStore } from '../../sessions/types.ts';
import type { EventOutbox } from '../../events/outbox.ts';
import { MEMORY_SWEEP_INTERVAL_MS } from '../../config/limits.ts';
import type { LinkSessionStore } from '../link-sessions.ts';
import type { PaymentStore } from '../payments.ts';
import type { RemovalStore } from '../removals.ts';
import { openSqliteDatabase, type SqliteHandle } from './database.ts';
import { prepare } from './driver.ts';
import type { Fsync } from './wal-sync.ts';
import { SqliteSessionStore } from './session-store.ts';
import { SqliteEventOutbox } from './outbox.ts';
import { SqlitePaymentStore } from './payments.ts';
import { SqliteLinkSessionStore } from './link-sessions.ts';
import { SqliteRemovalStore } from './removals.ts';

export interface SqliteStorage {
  handle: SqliteHandle;
  sessionStore: SessionStore;
  eventOutbox: EventOutbox;
  payments: PaymentStore;
  linkSessions: LinkSessionStore;
  removals: RemovalStore;
  /** Drops records past their retention (runs on a timer; public for tests). */
  sweep(): void;
  close(): Promise<void>;
}

export interface SqliteStorageOptions {
  now?: () => number;
  sweepIntervalMs?: number;
  /** How the WAL is flushed (tests); fs.fsync by default. */
  fsync?: Fsync;
}

/** Opens the data directory's database; throws DataDirectoryError (database.ts) when it cannot be used. */
export function openSqliteStorage(dataDir: string, options: SqliteStorageOptions = {}): SqliteStorage {
  const handle = openSqliteDatabase(dataDir, { fsync: options.fsync });
  const now = options.now ?? Date.now;
  const purge = ['sessions', 'markers', 'link_sessions', 'payments', 'payment_keys'].map((table) => prepare(handle.db, `DELETE FROM ${table} WHERE purge_at <= ?`));
  const purgeClaims = prepare(handle.db, 'DELETE FROM idempotency_claims WHERE session_id IS NOT NULL AND purge_at <= ?');
  const sweep = () => {
    const at = now();
    handle.transaction(() => {
      for (const statement of purge) statement.run(at);
      purgeClaims.run(at);
    });
  };
  const sweeper = setInterval(sweep, options.sweepIntervalMs ?? MEMORY_SWEEP_INTERVAL_MS);
  sweeper.unref();
  const sessionStore = new SqliteSessionStore(handle, { now });
  return {
    handle,
    sessionStore,
    eventOutbox: new SqliteEventOutbox(handle),
    payments: new SqlitePaymentStore(handle, { now }),
    linkSessions: new SqliteLinkSessionStore(handle, { now }),
    removals: new SqliteRemovalStore(handle),
    sweep,
    async close() {
      clearInterval(sweeper);
      await sessionStore.close();
      handle.close();
    },
  };
}
