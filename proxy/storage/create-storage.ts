// The one place that decides where the proxy's state lives (OBV_STORAGE):
// - `sqlite` (the default): one instance, a file in OBV_DATA_DIR; survives restarts and crashes.
// - `redis` (the default when OBV_REDIS_URL is set): several instances share everything.
// - `memory`: tests, and sandbox mode when chosen; a restart loses everything (production refuses it
//   unless OBV_ALLOW_VOLATILE_STORAGE says otherwise: config/schema.ts).
// Every backend gives the same repositories (test/helpers/storage-contract.ts runs one contract on all).
import type { Logger } from 'pino';
import type { Store } from 'express-rate-limit';
import type { ResultBus, SessionStore } from '../sessions/types.ts';
import { MemorySessionStore } from '../sessions/memory/store.ts';
import { MemoryResultBus } from '../sessions/memory/bus.ts';
import { createRedisBackend } from '../sessions/redis/backend.ts';
import type { EventOutbox } from '../events/outbox.ts';
import { MemoryEventOutbox } from '../events/memory-outbox.ts';
import { RedisEventOutbox } from '../events/redis-outbox.ts';
import type { PaymentStore } from './payments.ts';
import type { LinkSessionStore } from './link-sessions.ts';
import type { RemovalStore } from './removals.ts';
import { MemoryPaymentStore } from './memory/payments.ts';
import { MemoryLinkSessionStore } from './memory/link-sessions.ts';
import { MemoryRemovalStore } from './memory/removals.ts';
import { RedisPaymentStore } from './redis/payments.ts';
import { RedisLinkSessionStore } from './redis/link-sessions.ts';
import { RedisRemovalStore } from './redis/removals.ts';
import { openSqliteStorage } from './sqlite/storage.ts';
import type { SyncStats } from './sqlite/wal-sync.ts';
import type { RedisSessionStore } from '../sessions/redis/store.ts';

export type StorageKind = 'sqlite' | 'redis' | 'memory';

/** Every repository the proxy keeps its state in, on one backend. */
export interface Storage {
  readonly kind: StorageKind;
  /** Sessions, their idempotency claims and their short-lived one-time markers. */
  sessionStore: SessionStore;
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
  /** The failed API-key counts (merchant-auth.ts), shared across instances; undefined = in memory. */
  authFailureStore?: Store;
  /** Where the state is, for the boot log line (a directory, a Redis host, or "memory"). */
  readonly location: string;
  /**
   * SQLite only: fsyncs run so far and the acknowledgements that waited for one (storage/sqlite/wal-sync.ts;
   * the bench reads how many a notification costs).
   */
  readonly syncStats?: () => SyncStats;
  /** Closes what this function created. */
  close(): Promise<void>;
}

export interface StorageOptions {
  kind: StorageKind;
  /** `sqlite`: the data directory. */
  dataDir?: string;
  /** `redis`: the server. */
  redisUrl?: string;
  /** Prefix of every Redis key and channel; default `obv:`. */
  redisPrefix?: string;
  logger: Logger;
  now?: () => number;
}

/**
 * Builds the repositories for `options.kind`. Synchronous so `createObvProxy` can be: Redis connects in
 * the background (commands wait for the first connect); SQLite opens its file now and throws
 * DataDirectoryError (storage/sqlite/database.ts) when the directory cannot be used.
 */
export function createStorage(options: StorageOptions): Storage {
  if (options.kind === 'redis') {
    if (!options.redisUrl) throw new TypeError('createStorage: the redis storage needs redisUrl (OBV_REDIS_URL)');
    // Commands issued before the first connect wait for it; after that, while Redis is down, they fail
    // at once (SessionBackendUnavailableError → 503) instead of queueing. See sessions/redis/connection.ts.
    const redis = createRedisBackend({ url: options.redisUrl, prefix: options.redisPrefix, logger: options.logger.child({ component: 'redis' }) });
    return {
      kind: 'redis',
      ...redisRepositories(redis.sessionStore),
      resultBus: redis.resultBus,
      rateLimitStore: redis.rateLimitStore('verifications'),
      authFailureStore: redis.rateLimitStore('auth-failures'),
      location: redactedRedisUrl(options.redisUrl),
      close: () => redis.close(),
    };
  }
  if (options.kind === 'sqlite') {
    if (!options.dataDir) throw new TypeError('createStorage: the sqlite storage needs dataDir (OBV_DATA_DIR)');
    const sqlite = openSqliteStorage(options.dataDir, { now: options.now, logger: options.logger });
    const resultBus = new MemoryResultBus();
    return {
      kind: 'sqlite',
      sessionStore: sqlite.sessionStore,
      // One instance: the browser's socket is on this process, so the bus stays in memory.
      resultBus,
      eventOutbox: sqlite.eventOutbox,
      payments: sqlite.payments,
      linkSessions: sqlite.linkSessions,
      removals: sqlite.removals,
      location: sqlite.handle.path,
      syncStats: () => sqlite.handle.syncStats(),
      async close() {
        await resultBus.close();
        await sqlite.close();
      },
    };
  }
  const sessionStore = new MemorySessionStore({ now: options.now });
  const resultBus = new MemoryResultBus();
  return {
    kind: 'memory',
    sessionStore,
    resultBus,
    ...memoryRepositories(options.now),
    location: 'memory',
    async close() {
      await Promise.all([sessionStore.close(), resultBus.close()]);
    },
  };
}

/** The repositories besides sessions, in memory (also what a caller's own MemorySessionStore gets). */
export function memoryRepositories(now?: () => number): Pick<Storage, 'eventOutbox' | 'payments' | 'linkSessions' | 'removals'> {
  return {
    eventOutbox: new MemoryEventOutbox(),
    payments: new MemoryPaymentStore({ now }),
    linkSessions: new MemoryLinkSessionStore({ now }),
    removals: new MemoryRemovalStore(),
  };
}

/** The repositories on a Redis session store's connection (also what a caller's own RedisSessionStore gets). */
export function redisRepositories(store: RedisSessionStore): Pick<Storage, 'sessionStore' | 'eventOutbox' | 'payments' | 'linkSessions' | 'removals'> {
  return {
    sessionStore: store,
    eventOutbox: new RedisEventOutbox(store.redis, store.keys),
    payments: new RedisPaymentStore(store.redis, store.keys),
    linkSessions: new RedisLinkSessionStore(store.redis, store.keys),
    removals: new RedisRemovalStore(store.redis, store.keys),
  };
}

/** The Redis URL without its password, for a log line. */
function redactedRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'redis';
  }
}
