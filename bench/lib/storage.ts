// The session storage a per-storage section's proxy runs on (options.ts: `--storage memory,sqlite,postgres,redis`):
// SQLite in a fresh temp directory, PostgreSQL a throw-away cluster and Redis a throw-away redis-server,
// each on a free loopback port (as the tests start them), memory nothing. The proxy gets it as
// createObvProxy's `storage`, `dataDir`, `databaseUrl` and `redisUrl` — in process (the demo) through `proxyOptions`, in a bench child (obv-server.ts) through
// `env`. The options are passed loosely: a createObvProxy without `storage` drops the unknown keys (its
// schema is a plain z.object) and keeps its in-memory default; `redisUrl` it already knows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  if (name === 'redis') redis = await startRedisServer();
  if (name === 'postgres') postgres = await startPostgresServer();
  if (name === 'sqlite') dataDir = mkdtempSync(join(tmpdir(), 'obv-bench-sqlite-'));
  const proxyOptions: Record<string, string> = {
    storage: name,
    ...(dataDir ? { dataDir } : {}),
    ...(postgres ? { databaseUrl: postgres.url } : {}),
    ...(redis ? { redisUrl: redis.url } : {}),
  };
  return {
    name,
    proxyOptions,
    env: {
      BENCH_STORAGE: name,
      ...(dataDir ? { BENCH_DATA_DIR: dataDir } : {}),
      ...(postgres ? { BENCH_DATABASE_URL: postgres.url } : {}),
      ...(redis ? { BENCH_REDIS_URL: redis.url } : {}),
    },
    async close() {
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
  };
}
