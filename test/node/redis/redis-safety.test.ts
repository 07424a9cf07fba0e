// A Redis that cannot keep money safe is refused, with real redis-server processes (storage/redis/guard.ts):
// one restarted empty (or flushed) never lets an order be claimed again, whatever the instance believed;
// one without persistence is refused in production, also when it forbids CONFIG; a replica (READONLY)
// fails the readiness probe's write.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { DurabilityError, SessionBackendUnavailableError } from '../../../proxy/storage/errors.ts';
import { probeWrite } from '../../../proxy/storage/outage-log.ts';
import { openRedisStorage, type RedisStorage } from '../../../proxy/storage/redis/storage.ts';
import { readPersistence } from '../../../proxy/storage/redis/guard.ts';
import { captureLogs } from '../../helpers/log-capture.ts';
import { redisSkipReason, startRedisPair, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';
import { eventually, pendingPayment, pendingRecord, randomId, SUCCESS } from './support.ts';

const skip = redisSkipReason();
const RETENTION_MS = 60_000;

/** What a promise settles as: 'ok', 'lost' (DurabilityError), 'unavailable', or the error. */
function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (error: unknown) =>
      error instanceof DurabilityError
        ? 'lost'
        : error instanceof SessionBackendUnavailableError
          ? 'unavailable'
          : String(error),
  );
}

describe('a Redis that lost its data', { skip }, () => {
  let server: RedisServer;
  let storage: RedisStorage;
  const logs = captureLogs('info');

  before(async () => {
    server = await startRedisServer();
    storage = await openRedisStorage({
      url: server.url,
      prefix: 'safety:',
      maxReconnectDelayMs: 100,
      logger: logs.logger,
    });
    await storage.sessionStore.guard.check();
  });

  after(async () => {
    await storage?.close();
    await server?.close();
  });

  it('restarted empty: no order is claimed again, notifications and readiness are refused, one log line; the same mark back serves again', async () => {
    const paid = pendingPayment();
    assert.deepEqual(await storage.payments.claim(paid, RETENTION_MS), { claimed: true });
    const { leaseExpiresAt: _lease, ...rest } = paid;
    assert.equal(
      await storage.payments.finish({ ...rest, state: 'completed', providerStatus: 201 }, RETENTION_MS),
      true,
    );
    const session = pendingRecord();
    await storage.sessionStore.create(session);
    const raw = new Redis(server.url);
    const mark = await raw.get('safety:generation');
    raw.disconnect();
    assert.ok(mark);

    await server.stop('SIGKILL');
    await server.start();
    // The order it forgot: a second payment of it is refused, not claimed.
    const again = await eventually(async () => {
      const result = await outcome(storage.payments.claim(pendingPayment(paid.merchantTransactionId), RETENTION_MS));
      return result === 'unavailable' ? undefined : result;
    }, 10_000);
    assert.equal(again, 'lost');
    assert.equal(
      await outcome(storage.sessionStore.settle(session.sessionId, SUCCESS)),
      'lost',
      'a notification is refused',
    );
    assert.equal(await outcome(probeWrite(storage.sessionStore, Date.now())), 'lost', '/readyz answers 503 (failed)');
    assert.equal(await outcome(storage.payments.claim(pendingPayment(), RETENTION_MS)), 'lost', 'no new order either');
    assert.equal(logs.find("no longer holds this installation's generation mark").length, 1, 'one log line');

    // The operator restores a backup that holds the mark: serving again, by itself.
    const restorer = new Redis(server.url);
    try {
      await restorer.set('safety:generation', mark);
    } finally {
      restorer.disconnect();
    }
    await eventually(
      async () => ((await outcome(probeWrite(storage.sessionStore, Date.now()))) === 'ok' ? true : undefined),
      10_000,
    );
    assert.deepEqual(await storage.payments.claim(pendingPayment(), RETENTION_MS), { claimed: true });
    assert.equal(logs.find('generation mark is back').length, 1);
  });

  it("flushed under a running instance: the claim's own script refuses the order before the instance noticed", async () => {
    const order = `order-${randomId()}`;
    assert.deepEqual(await storage.payments.claim(pendingPayment(order), RETENTION_MS), { claimed: true });
    const raw = new Redis(server.url);
    try {
      const mark = await raw.get('safety:generation');
      await raw.flushall();
      assert.equal(await outcome(storage.payments.claim(pendingPayment(order), RETENTION_MS)), 'lost');
      await raw.set('safety:generation', mark!);
    } finally {
      raw.disconnect();
    }
  });
});

describe('a Redis without persistence', { skip }, () => {
  const servers: RedisServer[] = [];
  const opened: RedisStorage[] = [];

  after(async () => {
    await Promise.all(opened.map((storage) => storage.close()));
    await Promise.all(servers.map((server) => server.close()));
  });

  async function open(options: Parameters<typeof startRedisServer>[0], requirePersistence: boolean) {
    const server = await startRedisServer(options);
    servers.push(server);
    const logs = captureLogs('info');
    const storage = await openRedisStorage({ url: server.url, requirePersistence, logger: logs.logger });
    opened.push(storage);
    await storage.sessionStore.guard.check();
    return { server, storage, logs };
  }

  it('is refused in production: payments, notifications and readiness, with one error line naming the fix', async () => {
    const { storage, logs } = await open({}, true);
    assert.equal(await outcome(storage.payments.claim(pendingPayment(), RETENTION_MS)), 'lost');
    const session = pendingRecord();
    await storage.sessionStore.create(session);
    assert.equal(await outcome(storage.sessionStore.settle(session.sessionId, SUCCESS)), 'lost');
    assert.equal(await outcome(probeWrite(storage.sessionStore, Date.now())), 'lost');
    const [line, ...more] = logs.find('Redis does not persist');
    assert.equal(more.length, 0);
    assert.equal(line?.level, 50);
    assert.match(String(line?.msg), /appendonly yes/);
  });

  it('is read from INFO when CONFIG is forbidden (a managed Redis), and refused the same', async () => {
    const { server, storage, logs } = await open({ args: ['--rename-command', 'CONFIG', ''] }, true);
    const raw = new Redis(server.url);
    try {
      await assert.rejects(raw.call('CONFIG', 'GET', 'appendonly'), /unknown command/i);
      assert.deepEqual(await readPersistence(raw), { persists: false, source: 'INFO' });
    } finally {
      raw.disconnect();
    }
    assert.equal(await outcome(storage.payments.claim(pendingPayment(), RETENTION_MS)), 'lost');
    assert.equal(logs.find('Redis does not persist')[0]?.source, 'INFO');
  });

  it('is accepted in sandbox mode (said at info), and a persistent one in production', async () => {
    const sandbox = await open({}, false);
    assert.deepEqual(await sandbox.storage.payments.claim(pendingPayment(), RETENTION_MS), { claimed: true });
    assert.equal(sandbox.logs.find('appendonly no')[0]?.level, 30);
    const production = await open({ persistent: true }, true);
    assert.deepEqual(await production.storage.payments.claim(pendingPayment(), RETENTION_MS), { claimed: true });
    assert.deepEqual(await readPersistence(production.storage.sessionStore.redis), {
      persists: true,
      appendfsync: 'always',
      source: 'CONFIG',
    });
  });
});

describe('a Redis replica (READONLY)', { skip }, () => {
  let primary: RedisServer;
  let replica: RedisServer;
  let onPrimary: RedisStorage;
  let onReplica: RedisStorage;

  before(async () => {
    ({ primary, replica } = await startRedisPair({ replica: { persistent: true } }));
    onPrimary = await openRedisStorage({ url: primary.url });
    await onPrimary.sessionStore.guard.check();
    // The primary's generation mark reaches the replica before its storage opens: its guard takes the mark it
    // finds (it could not write one on a replica).
    const raw = new Redis(replica.url);
    try {
      await eventually(async () => ((await raw.get('obv:generation')) !== null ? true : undefined), 10_000);
    } finally {
      raw.disconnect();
    }
    onReplica = await openRedisStorage({ url: replica.url });
    await onReplica.sessionStore.guard.check();
  });

  after(async () => {
    await onReplica?.close();
    await onPrimary?.close();
    await replica?.close();
    await primary?.close();
  });

  it("fails the readiness probe's write (503), and takes no payment", async () => {
    assert.equal(await outcome(probeWrite(onPrimary.sessionStore, Date.now())), 'ok');
    assert.equal(await outcome(probeWrite(onReplica.sessionStore, Date.now())), 'unavailable');
    assert.equal(await outcome(onReplica.payments.claim(pendingPayment(), RETENTION_MS)), 'unavailable');
  });
});
