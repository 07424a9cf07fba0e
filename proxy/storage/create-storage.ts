// The one place that decides where the proxy's state lives (OBV_STORAGE):
// - `sqlite` (the default): one instance, a file in OBV_DATA_DIR; survives restarts and crashes.
// - `postgres` (the default when OBV_DATABASE_URL is set): several instances share everything, and a
//   failover to a synchronous standby loses nothing acknowledged.
// - `redis` (the default when OBV_REDIS_URL is set): several instances share everything.
// - `memory`: tests, and sandbox mode when chosen; a restart loses everything (production refuses it
//   unless OBV_ALLOW_VOLATILE_STORAGE says otherwise: config/schema.ts).
// Each backend is one folder beside this file with every repository (test/helpers/storage-contract.ts
// runs one contract on all); a new one is a folder and a case below.
import type { Logger } from 'pino';
import type { OutboxCodec } from './outbox.ts';
import type { Storage, StorageKind } from './storage.ts';
import { createMemoryStorage } from './memory/storage.ts';
import { MemoryResultBus } from './memory/bus.ts';
import { createPostgresStorage } from './postgres/storage.ts';
import { createRedisStorage } from './redis/storage.ts';
import { openSqliteStorage } from './sqlite/storage.ts';

export interface StorageOptions {
  kind: StorageKind;
  /** `sqlite`: the data directory. */
  dataDir?: string | undefined;
  /** `postgres`: the database (`postgres://user:password@host:port/database`). */
  databaseUrl?: string | undefined;
  /** `postgres`: the schema its tables live in; default `obv_link`. */
  databaseSchema?: string | undefined;
  /** `postgres`: connections this instance opens at most; default 10. */
  databasePoolSize?: number | undefined;
  /** `postgres`: the longest a statement may run before the request answers 503; default 5 s. */
  databaseStatementTimeoutMs?: number | undefined;
  /** `redis`: the server. */
  redisUrl?: string | undefined;
  /** Prefix of every Redis key and channel; default `obv:`. */
  redisPrefix?: string | undefined;
  /** `redis`: replicas each money write waits for (storage/redis/replicas.ts); default 0. */
  redisMinReplicas?: number | undefined;
  /** `redis`: how long it waits for them; default 1 s. */
  redisReplicaTimeoutMs?: number | undefined;
  /** `redis`: Sentinel's addresses; the primary is whichever they name for `redisSentinelName`. */
  redisSentinels?: readonly { host: string; port: number }[] | undefined;
  /** `redis`: the name Sentinel monitors the primary under. */
  redisSentinelName?: string | undefined;
  /** Production: a Redis that does not persist is refused (storage/redis/guard.ts); default false. */
  production?: boolean | undefined;
  /** Where the Redis and PostgreSQL connections say they went down and came back; default: nowhere. */
  logger?: Logger | undefined;
  now?: (() => number) | undefined;
  /**
   * How the outbox keeps merchant events at rest: createObvProxy passes one sealing under OBV_SEALING_KEYS
   * (sealing/outbox-codec.ts; `createOutboxCodec` for a storage built by hand); default: in the clear.
   */
  outboxCodec?: OutboxCodec | undefined;
}

/**
 * Builds the repositories for `options.kind`. Synchronous so `createObvProxy` can be: PostgreSQL and Redis
 * connect in the background (postgres/storage.ts: the schema migrates before the first query; redis/storage.ts); SQLite opens its file now and throws DataDirectoryError
 * (sqlite/database.ts) when the directory cannot be used.
 */
export function createStorage(options: StorageOptions): Storage {
  switch (options.kind) {
    case 'sqlite':
      return sqliteStorage(options);
    case 'postgres':
      if (!options.databaseUrl)
        throw new TypeError('createStorage: the postgres storage needs databaseUrl (OBV_DATABASE_URL)');
      return createPostgresStorage({
        url: options.databaseUrl,
        schema: options.databaseSchema,
        poolSize: options.databasePoolSize,
        statementTimeoutMs: options.databaseStatementTimeoutMs,
        logger: options.logger?.child({ component: 'postgres' }),
        now: options.now,
        outboxCodec: options.outboxCodec,
      });
    case 'redis':
      if (!options.redisUrl) throw new TypeError('createStorage: the redis storage needs redisUrl (OBV_REDIS_URL)');
      return createRedisStorage({
        url: options.redisUrl,
        prefix: options.redisPrefix,
        requirePersistence: options.production ?? false,
        minReplicas: options.redisMinReplicas,
        replicaTimeoutMs: options.redisReplicaTimeoutMs,
        sentinels: options.redisSentinels,
        sentinelName: options.redisSentinelName,
        logger: options.logger?.child({ component: 'redis' }),
        outboxCodec: options.outboxCodec,
      });
    case 'memory':
      return createMemoryStorage({ now: options.now, outboxCodec: options.outboxCodec });
  }
}

/** SQLite's repositories, and the result bus of its one instance: in memory (the browser's socket is on this process). */
function sqliteStorage(options: StorageOptions): Storage {
  if (!options.dataDir) throw new TypeError('createStorage: the sqlite storage needs dataDir (OBV_DATA_DIR)');
  const sqlite = openSqliteStorage(options.dataDir, {
    now: options.now,
    logger: options.logger,
    outboxCodec: options.outboxCodec,
  });
  const resultBus = new MemoryResultBus();
  return {
    kind: 'sqlite',
    sessionStore: sqlite.sessionStore,
    outcomeWriter: sqlite.sessionStore,
    resultBus,
    eventOutbox: sqlite.eventOutbox,
    payments: sqlite.payments,
    linkSessions: sqlite.linkSessions,
    removals: sqlite.removals,
    sealsEvents: options.outboxCodec?.seals ?? false,
    location: sqlite.handle.path,
    syncStats: () => sqlite.handle.syncStats(),
    async close() {
      await resultBus.close();
      await sqlite.close();
    },
  };
}
