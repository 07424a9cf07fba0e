// The one place that decides where the proxy's state lives (OBV_STORAGE):
// - `sqlite` (the default): one instance, a file in OBV_DATA_DIR; survives restarts and crashes.
// - `redis` (the default when OBV_REDIS_URL is set): several instances share everything.
// - `memory`: tests, and sandbox mode when chosen; a restart loses everything (production refuses it
//   unless OBV_ALLOW_VOLATILE_STORAGE says otherwise: config/schema.ts).
// Each backend is one folder beside this file with every repository (test/helpers/storage-contract.ts
// runs one contract on all); a new one is a folder and a case below.
import type { Logger } from 'pino';
import type { Storage, StorageKind } from './storage.ts';
import { createMemoryStorage } from './memory/storage.ts';
import { MemoryResultBus } from './memory/bus.ts';
import { createRedisStorage } from './redis/storage.ts';
import { openSqliteStorage } from './sqlite/storage.ts';

export interface StorageOptions {
  kind: StorageKind;
  /** `sqlite`: the data directory. */
  dataDir?: string | undefined;
  /** `redis`: the server. */
  redisUrl?: string | undefined;
  /** Prefix of every Redis key and channel; default `obv:`. */
  redisPrefix?: string | undefined;
  /** Production: a Redis that does not persist is refused (storage/redis/guard.ts); default false. */
  production?: boolean | undefined;
  /** Where the Redis connections say they went down and came back; default: nowhere. */
  logger?: Logger | undefined;
  now?: (() => number) | undefined;
}

/**
 * Builds the repositories for `options.kind`. Synchronous so `createObvProxy` can be: Redis connects in
 * the background (redis/storage.ts); SQLite opens its file now and throws DataDirectoryError
 * (sqlite/database.ts) when the directory cannot be used.
 */
export function createStorage(options: StorageOptions): Storage {
  switch (options.kind) {
    case 'sqlite':
      return sqliteStorage(options);
    case 'redis':
      if (!options.redisUrl) throw new TypeError('createStorage: the redis storage needs redisUrl (OBV_REDIS_URL)');
      return createRedisStorage({
        url: options.redisUrl, prefix: options.redisPrefix, requirePersistence: options.production ?? false, logger: options.logger?.child({ component: 'redis' }),
      });
    case 'memory':
      return createMemoryStorage({ now: options.now });
  }
}

/** SQLite's repositories, and the result bus of its one instance: in memory (the browser's socket is on this process). */
function sqliteStorage(options: StorageOptions): Storage {
  if (!options.dataDir) throw new TypeError('createStorage: the sqlite storage needs dataDir (OBV_DATA_DIR)');
  const sqlite = openSqliteStorage(options.dataDir, { now: options.now, logger: options.logger });
  const resultBus = new MemoryResultBus();
  return {
    kind: 'sqlite',
    sessionStore: sqlite.sessionStore,
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
