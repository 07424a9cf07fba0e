// Every repository on PostgreSQL, for several proxy instances: one pool per process (database.ts) that
// every repository shares, one listening connection for the relay's bus (bus.ts), the schema created and
// migrated at start-up (schema.ts), and the expired records swept on a timer (housekeeping.ts). `pg` loads
// only when this backend is built (packages.ts).
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { MEMORY_SWEEP_INTERVAL_MS } from '../../config/limits.ts';
import type { Storage } from '../storage.ts';
import { SessionBackendUnavailableError } from '../errors.ts';
import { PostgresResultBus } from './bus.ts';
import { Database } from './database.ts';
import { Housekeeping } from './housekeeping.ts';
import { PostgresLinkSessionStore } from './link-sessions.ts';
import type { PostgresStorageOptions } from './options.ts';
import { PostgresEventOutbox } from './outbox.ts';
import { PostgresPaymentStore } from './payments.ts';
import { PostgresRateLimitStore } from './rate-limit.ts';
import { PostgresRemovalStore } from './removals.ts';
import { PostgresSessionStore } from './session-store.ts';

export interface PostgresStorage extends Storage {
  readonly kind: 'postgres';
  /** Resolves once the schema is migrated and the relay's listener is up. */
  ready(timeoutMs?: number): Promise<void>;
  /** Deletes the records past their retention now (it runs on a timer; tests and the bench call it). */
  sweep(): Promise<number>;
}

export interface PostgresStorageBuildOptions extends PostgresStorageOptions {
  /** How often the relay's bus reads the session events while sockets wait (bus.ts). */
  busPollIntervalMs?: number | undefined;
  sweepIntervalMs?: number | undefined;
}

/**
 * Builds every repository at once; the pool connects and the schema migrates in the background. Queries
 * issued meanwhile wait for the migration (and answer 503 while the database cannot be reached), so a
 * synchronous caller can use it straight away; `ready()` tells when it is fully up.
 * @throws TypeError for a URL that is not postgres:// or postgresql://, or a schema name that is not a plain SQL name.
 */
export function createPostgresStorage(options: PostgresStorageBuildOptions): PostgresStorage {
  const db = new Database(options);
  const now = options.now ?? Date.now;
  // Names this instance on the outbox's leases (event_jobs.leased_by): which instance holds a job.
  const instance = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const eventOutbox = new PostgresEventOutbox(db, { instance, codec: options.outboxCodec, logger: options.logger });
  // A notification's event is recorded in the same transaction as its outcome (outcome-write.ts).
  const sessionStore = new PostgresSessionStore(db, {
    now,
    recordEvent: (tx, event, nowMs) => eventOutbox.record(tx, event, nowMs),
  });
  const resultBus = new PostgresResultBus(db, { pollIntervalMs: options.busPollIntervalMs, logger: options.logger });
  const housekeeping = new Housekeeping(db, now, options.logger);
  housekeeping.start(options.sweepIntervalMs ?? MEMORY_SWEEP_INTERVAL_MS);
  return {
    kind: 'postgres',
    sessionStore,
    outcomeWriter: sessionStore,
    resultBus,
    eventOutbox,
    payments: new PostgresPaymentStore(db, { now }),
    linkSessions: new PostgresLinkSessionStore(db, { now }),
    removals: new PostgresRemovalStore(db),
    rateLimitStore: new PostgresRateLimitStore(db, 'verifications', now),
    authFailureStore: new PostgresRateLimitStore(db, 'auth-failures', now),
    sealsEvents: options.outboxCodec?.seals ?? false,
    location: db.location,
    async ready(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      // The database may still be starting: tried again until the deadline, unless the schema is refused.
      for (;;) {
        try {
          await withTimeout(db.ready(), Math.max(1, deadline - Date.now()), 'PostgreSQL schema not ready');
          break;
        } catch (error) {
          if (!(error instanceof SessionBackendUnavailableError) || Date.now() >= deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      await resultBus.ready(Math.max(1, deadline - Date.now()));
    },
    sweep: () => housekeeping.sweep(),
    async close() {
      await housekeeping.close();
      await eventOutbox.close();
      await sessionStore.close();
      await resultBus.close();
      await db.close();
    },
  };
}

/**
 * {@link createPostgresStorage}, resolved once the schema is migrated and the relay listens.
 * @throws Error when the database is not reachable within `readyTimeoutMs` (default 10 s), or its schema
 * is newer than this release; nothing is left open.
 */
export async function openPostgresStorage(
  options: PostgresStorageBuildOptions,
  readyTimeoutMs?: number,
): Promise<PostgresStorage> {
  const storage = createPostgresStorage(options);
  try {
    await storage.ready(readyTimeoutMs);
  } catch (error) {
    await storage.close();
    throw error;
  }
  return storage;
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
