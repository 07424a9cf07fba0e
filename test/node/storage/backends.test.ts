// One contract, three backends: the typed repositories (payments, link sessions, removals), the session
// store and the event outbox answer the same on memory, SQLite and Redis.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { createLogger } from '../../../proxy/index.ts';
import { createStorage } from '../../../proxy/storage/create-storage.ts';
import { type Storage } from '../../../proxy/storage/storage.ts';
import { describeStorageContract } from '../../helpers/storage-contract.ts';
import { describeSessionStoreContract } from '../../helpers/session-backend-contract.ts';
import { describeOutboxContract } from '../../helpers/outbox-contract.ts';
import { startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';

const logger = createLogger('silent');
const dirs: string[] = [];
let redis: Promise<RedisServer> | undefined;
let prefixes = 0;

const factories: Record<string, () => Promise<Storage>> = {
  memory: async () => createStorage({ kind: 'memory', logger }),
  sqlite: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'obv-storage-'));
    dirs.push(dir);
    return createStorage({ kind: 'sqlite', dataDir: dir, logger });
  },
  redis: async () => {
    const server = await (redis ??= startRedisServer());
    const storage = createStorage({ kind: 'redis', redisUrl: server.url, redisPrefix: `contract${prefixes++}:`, logger });
    // The first command waits for the connection; a fresh prefix keeps tests apart.
    await storage.removals.isRemoved('x', 'y');
    return storage;
  },
};

/** One repository of `storage` whose close() closes the whole storage (the contracts close what they get). */
function closingStorage<Key extends 'sessionStore' | 'eventOutbox'>(storage: Storage, key: Key): Storage[Key] {
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
  if (name === 'sqlite') {
    // The session store and the outbox have their own contracts (memory and Redis run them in test/node/proxy and test/node/redis).
    describeSessionStoreContract(name, async () => closingStorage(await make(), 'sessionStore'));
    describeOutboxContract(name, async () => closingStorage(await make(), 'eventOutbox'));
  }
}

after(async () => {
  await (await redis)?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
