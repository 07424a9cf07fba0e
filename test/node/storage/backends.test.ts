// One contract, four backends: the typed repositories (payments, link sessions, removals), the session
// store and the event outbox answer the same on memory, SQLite, PostgreSQL and Redis. Each PostgreSQL
// storage gets a schema of its own on one throw-away cluster (test/helpers/postgres-server.ts).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
import { Redis } from 'ioredis';
import { createOutboxCodec } from '../../../proxy/sealing/outbox-codec.ts';
import type { OutboxCodec } from '../../../proxy/storage/outbox.ts';
import { openSqliteStorage, type SqliteStorage } from '../../../proxy/storage/sqlite/storage.ts';
import { prepare } from '../../../proxy/storage/sqlite/driver.ts';
import {
  describeSealedOutboxContract,
  sealingKey,
  type SealedOutboxPlace,
} from '../../helpers/sealed-outbox-contract.ts';

const logger = createLogger('silent');
const dirs: string[] = [];
let redis: Promise<RedisServer> | undefined;
let prefixes = 0;
let postgres: Promise<PostgresServer> | undefined;
let schemas = 0;

/** As createObvProxy builds them: the outbox seals its events. */
const outboxCodec = createOutboxCodec([sealingKey('contract')]);

const factories: Record<string, () => Promise<Storage>> = {
  memory: async () => createStorage({ kind: 'memory', logger, outboxCodec }),
  sqlite: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'obv-storage-'));
    dirs.push(dir);
    return createStorage({ kind: 'sqlite', dataDir: dir, logger, outboxCodec });
  },
  redis: async () => {
    const server = await (redis ??= startRedisServer());
    const storage = createStorage({
      kind: 'redis',
      redisUrl: server.url,
      redisPrefix: `contract${prefixes++}:`,
      logger,
      outboxCodec,
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
    return openPostgresStorage({
      url: server.url,
      schema: `contract${schemas++}`,
      busPollIntervalMs: 200,
      outboxCodec,
    });
  };
}

/** Each backend's place for the sealed-outbox contract: its outboxes opened one at a time on the same data. */
const places: Record<string, () => Promise<SealedOutboxPlace>> = {
  sqlite: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'obv-sealed-'));
    dirs.push(dir);
    let open: SqliteStorage | undefined;
    return {
      async open(codec: OutboxCodec) {
        const storage = openSqliteStorage(dir, { outboxCodec: codec, logger });
        open = storage;
        return closingStorage(storage as unknown as Storage, 'eventOutbox');
      },
      raw: async () =>
        readdirSync(dir)
          .map((file) => readFileSync(join(dir, file)).toString('latin1'))
          .join('\n'),
      async copyBody(from, to) {
        prepare(open!.handle.db, 'UPDATE events SET body = (SELECT body FROM events WHERE id = ?) WHERE id = ?').run(
          from,
          to,
        );
      },
      close: async () => undefined,
    };
  },
  redis: async () => {
    const server = await (redis ??= startRedisServer());
    const prefix = `sealed${prefixes++}:`;
    const raw = new Redis(server.url);
    return {
      async open(codec: OutboxCodec) {
        const storage = createStorage({
          kind: 'redis',
          redisUrl: server.url,
          redisPrefix: prefix,
          logger,
          outboxCodec: codec,
        });
        return closingStorage(storage, 'eventOutbox');
      },
      async raw() {
        const keys = await raw.keys(`${prefix}*`);
        const values = await Promise.all(
          keys.map(async (key) => {
            const type = await raw.type(key);
            if (type === 'hash') return JSON.stringify(await raw.hgetall(key));
            if (type === 'string') return raw.get(key);
            if (type === 'set') return JSON.stringify(await raw.smembers(key));
            if (type === 'zset') return JSON.stringify(await raw.zrange(key, 0, -1));
            return '';
          }),
        );
        return [...keys, ...values].join('\n');
      },
      async copyBody(from, to) {
        await raw.hset(`${prefix}evt:${to}`, 'event', (await raw.hget(`${prefix}evt:${from}`, 'event'))!);
      },
      close: async () => raw.disconnect(),
    };
  },
};
if (!postgresSkipReason()) {
  places.postgres = async () => {
    const server = await (postgres ??= startPostgresServer());
    const schema = `sealed${schemas++}`;
    return {
      async open(codec: OutboxCodec) {
        const storage = await openPostgresStorage({ url: server.url, schema, outboxCodec: codec });
        return closingStorage(storage, 'eventOutbox');
      },
      raw: () => server.sql(`SELECT string_agg(row_to_json(e)::text, E'\\n') FROM ${schema}.events e`),
      async copyBody(from, to) {
        await server.sql(
          `UPDATE ${schema}.events SET body = (SELECT body FROM ${schema}.events WHERE id = '${from}') WHERE id = '${to}'`,
        );
      },
      close: async () => undefined,
    };
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
for (const [name, makePlace] of Object.entries(places)) describeSealedOutboxContract(name, makePlace);

after(async () => {
  await (await redis)?.close();
  await (await postgres)?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
