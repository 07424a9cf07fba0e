// Every repository on one SQLite file, and the sweep that drops what is past its retention.
import { dirname } from 'node:path';
import type { SessionStore } from '../sessions.ts';
import type { EventOutbox } from '../outbox.ts';
import { MEMORY_SWEEP_INTERVAL_MS } from '../../config/limits.ts';
import type { LinkSessionStore } from '../link-sessions.ts';
import type { PaymentStore } from '../payments.ts';
import type { RemovalStore } from '../removals.ts';
import { explainOpenFailure, openSqliteDatabase, type SqliteHandle } from './database.ts';
import { StorageFullError } from '../errors.ts';
import { prepare } from './driver.ts';
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

/** Opens the data directory's database; throws DataDirectoryError (database.ts) when it cannot be used. */
export function openSqliteStorage(dataDir: string, options: { now?: () => number; sweepIntervalMs?: number } = {}): SqliteStorage {
  const handle = openSqliteDatabase(dataDir);
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
  let repositories;
  try {
    // Their constructors clear what a process that is gone left behind: the first writes of a start.
    repositories = {
      sessionStore: new SqliteSessionStore(handle, { now }),
      eventOutbox: new SqliteEventOutbox(handle),
      payments: new SqlitePaymentStore(handle, { now }),
      linkSessions: new SqliteLinkSessionStore(handle, { now }),
      removals: new SqliteRemovalStore(handle),
    };
  } catch (error) {
    handle.close();
    throw explainOpenFailure(error, dirname(handle.path));
  }
  const { sessionStore } = repositories;
  const sweeper = setInterval(() => {
    try {
      sweep();
    } catch (error) {
      // A full disk is told once by the outage log; the sweep runs again at the next interval.
      if (!(error instanceof StorageFullError)) throw error;
    }
  }, options.sweepIntervalMs ?? MEMORY_SWEEP_INTERVAL_MS);
  sweeper.unref();
  return {
    handle,
    ...repositories,
    sweep,
    async close() {
      clearInterval(sweeper);
      await sessionStore.close();
      handle.close();
    },
  };
}
