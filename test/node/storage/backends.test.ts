// One contract, four backends: the typed repositories (payments, link sessions, removals), the session
// store and the event outbox answer the same on memory, SQLite, PostgreSQL and Redis. Each PostgreSQL
// storage gets a schema of its own on one throw-away cluster (test/helpers/postgres-server.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { createLogger } from '../../../proxy/index.ts';
import { createStorage } from '../../../proxy/storage/create-storage.ts';
import { type Storage } from '../../../proxy/storage/storage.ts';
import { describeStorageContract } from '../../helpers/storage-contract.ts';
import { describeResultBusContract, describeSessionStoreContract } from '../../helpers/session-backend-contract.ts';
import { describeOutboxContract } from '../../helpers/outbox-contract.ts';
import { startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';
import { postgresSkipReason, startPostgresServer, type PostgresServer } from '../../helpers/postgres-server.ts';
import { openPostgresStorage } from '../../../proxy/storage/postgres/storage.ts';

const logger = createLogger('silent');
const dirs: string[] = [];
let redis: Promise<RedisServer> | undefined;
let prefixes = 0;
let postgres: Promise<PostgresServer> | undefined;
let schemas = 0;

const factories: Record<string, () => Promise<Storage>> = {
  memory: async () => createStorage({ kind: 'memory', logger }),
  sqlite: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'obv-storage-'));
    dirs.push(dir);
    return createStorage({ kind: 'sqlite', dataDir: dir, logger });
  },
  redis: async () => {
    const server = await (redis ??= startRedisServer());
    const storage = createStorage({
      kind: 'redis',
      redisUrl: server.url,
      redisPrefix: `contract${prefixes++}:`,
      logger,
    });
    // The first command waits for the connection; a fresh prefix keeps tests apart.
    await storage.removals.isRemoved('x', 'y');
    return storage;
  },
};
// Without PostgreSQL the suites skip loudly (and fail with CI=true: postgres-server.ts).
if (!postgresSkipReason()) {
  factories.postgres = async () => {
    const server = await (postgres ??= startPostgresServer());
    // Migrated and listening before the test starts: the contracts time their own waits.
    return openPostgresStorage({ url: server.url, schema: `contract${schemas++}`, busPollIntervalMs: 200 });
  };
}

/** One repository of `storage` whose close() closes the whole storage (the contracts close what they get). */
function closingStorage<Key extends 'sessionStore' | 'eventOutbox' | 'resultBus'>(
  storage: Storage,
  key: Key,
): Storage[Key] {
  const target = storage[key];
  return new Proxy(target, {
    get(object, property) {
      if (property === 'close') return () => storage.close();
      const value: unknown = Reflect.get(object, property);
      // Bound to the real object: its methods read private fields.
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

for (const [name, make] of Object.entries(factories)) {
  describeStorageContract(name, make);
  if (name === 'sqlite' || name === 'postgres') {
    // The session store and the outbox have their own contracts (memory and Redis run them in test/node/proxy and test/node/redis).
    describeSessionStoreContract(name, async () => closingStorage(await make(), 'sessionStore'));
    describeOutboxContract(name, async () => closingStorage(await make(), 'eventOutbox'));
  }
  if (name === 'postgres') describeResultBusContract(name, async () => closingStorage(await make(), 'resultBus'));
}

after(async () => {
  await (await redis)?.close();
  await (await postgres)?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
