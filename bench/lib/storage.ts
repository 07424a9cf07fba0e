// The session storage a per-storage section's proxy runs on (options.ts: `--storage memory,sqlite,postgres,redis`):
// SQLite in a fresh temp directory, PostgreSQL a throw-away cluster and Redis a throw-away redis-server,
// each on a free loopback port (as the tests start them), memory nothing. The proxy gets it as
// createObvProxy's `storage`, `dataDir`, `databaseUrl` and `redisUrl` — in process (the demo) through `proxyOptions`, in a bench child (obv-server.ts) through
// `env`. The options are passed loosely: a createObvProxy without `storage` drops the unknown keys (its
// schema is a plain z.object) and keeps its in-memory default; `redisUrl` it already knows.
// `redis-replica` and `redis-wait` are Redis with one replica on the same host, the second with
// `redisMinReplicas: 1` (storage/redis/replicas.ts): the pair shows what waiting for the replica costs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from '../../test/helpers/redis-server.ts';
import { startPostgresServer, type PostgresServer } from '../../test/helpers/postgres-server.ts';
import type { StorageName } from './options.ts';

export interface BenchStorage {
  readonly name: StorageName;
  /** Spread into createObvProxy's options: `{ storage, dataDir?, databaseUrl?, redisUrl? }`. */
  readonly proxyOptions: Readonly<Record<string, string>>;
  /** The same for a bench child: BENCH_STORAGE, BENCH_DATA_DIR, BENCH_DATABASE_URL, BENCH_REDIS_URL. */
  readonly env: Readonly<Record<string, string>>;
  /** Stops PostgreSQL or Redis, removes the SQLite directory. */
  close(): Promise<void>;
}

/** Starts what `name` needs, fresh: no section sees another's data. */
export async function openStorage(name: StorageName): Promise<BenchStorage> {
  let redis: RedisServer | undefined;
  let postgres: PostgresServer | undefined;
  let dataDir: string | undefined;
  let replica: RedisServer | undefined;
  if (name === 'redis') redis = await startRedisServer();
  if (name === 'redis-replica' || name === 'redis-wait') {
    redis = await startRedisServer({ persistent: true });
    replica = await startReplica(redis);
  }
  const minReplicas = name === 'redis-wait' ? '1' : undefined;
  if (name === 'postgres') postgres = await startPostgresServer();
  if (name === 'sqlite') dataDir = mkdtempSync(join(tmpdir(), 'obv-bench-sqlite-'));
  const proxyOptions: Record<string, string> = {
    storage: redis ? 'redis' : name,
    ...(dataDir ? { dataDir } : {}),
    ...(postgres ? { databaseUrl: postgres.url } : {}),
    ...(redis ? { redisUrl: redis.url } : {}),
    ...(minReplicas ? { redisMinReplicas: minReplicas } : {}),
  };
  return {
    name,
    proxyOptions,
    env: {
      BENCH_STORAGE: redis ? 'redis' : name,
      ...(dataDir ? { BENCH_DATA_DIR: dataDir } : {}),
      ...(postgres ? { BENCH_DATABASE_URL: postgres.url } : {}),
      ...(redis ? { BENCH_REDIS_URL: redis.url } : {}),
      ...(minReplicas ? { BENCH_REDIS_MIN_REPLICAS: minReplicas } : {}),
    },
    async close() {
      await replica?.close();
      await redis?.close();
      await postgres?.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** What a bench child reads back from `env` (undefined when no storage was asked for: memory). */
export function storageFromEnv(env: NodeJS.ProcessEnv): Record<string, string> | undefined {
  const name = env.BENCH_STORAGE;
  if (!name) return undefined;
  return {
    storage: name,
    ...(env.BENCH_DATA_DIR ? { dataDir: env.BENCH_DATA_DIR } : {}),
    ...(env.BENCH_DATABASE_URL ? { databaseUrl: env.BENCH_DATABASE_URL } : {}),
    ...(env.BENCH_REDIS_URL ? { redisUrl: env.BENCH_REDIS_URL } : {}),
    ...(env.BENCH_REDIS_MIN_REPLICAS ? { redisMinReplicas: env.BENCH_REDIS_MIN_REPLICAS } : {}),
  };
}

/** A replica of `primary`, once its link is up. */
async function startReplica(primary: RedisServer): Promise<RedisServer> {
  const replica = await startRedisServer({
    persistent: true,
    args: ['--replicaof', '127.0.0.1', String(primary.port)],
  });
  const client = new Redis(replica.url, { maxRetriesPerRequest: 1 });
  try {
    const deadline = Date.now() + 10_000;
    while (!(await client.info('replication')).includes('master_link_status:up')) {
      if (Date.now() > deadline) throw new Error('bench: the Redis replica never linked to its primary');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } catch (error) {
    await replica.close();
    throw error;
  } finally {
    client.disconnect();
  }
  return replica;
}
