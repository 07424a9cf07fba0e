// Redis Sentinel followed (OBV_REDIS_SENTINELS, storage/redis/connection.ts), with real processes: a
// primary, its replica and one sentinel quick to act. The storage finds the primary through Sentinel;
// the primary is SIGKILLed, Sentinel promotes the replica, and the same storage (no restart) writes and
// claims payments again on the promoted one, with what was written before the kill still there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { openRedisStorage, type RedisStorage } from '../../../proxy/storage/redis/storage.ts';
import {
  redisSkipReason,
  startRedisSentinel,
  startRedisPair,
  type RedisSentinel,
  type RedisServer,
} from '../../helpers/redis-server.ts';
import { eventually, inspector, pendingPayment, pendingRecord } from './support.ts';

const skip = redisSkipReason();
const NAME = 'obv-test';
const RETENTION_MS = 60_000;

describe('Redis Sentinel followed across a failover', { skip }, () => {
  let primary: RedisServer;
  let replica: RedisServer;
  let sentinel: RedisSentinel;
  let onSentinel: Redis;
  let onReplica: Redis;
  let storage: RedisStorage;

  before(async () => {
    ({ primary, replica } = await startRedisPair({ replica: { persistent: true } }));
    onReplica = inspector(replica.url);
    sentinel = await startRedisSentinel(primary.port, NAME);
    onSentinel = inspector(`redis://127.0.0.1:${sentinel.port}`);
    // Sentinel learns of the replica from the primary's INFO: it can only promote one it knows.
    await eventually(async () => {
      const replicas = (await onSentinel.call('SENTINEL', 'REPLICAS', NAME)) as string[][];
      return replicas.some((fields) => fields.includes(String(replica.port))) ? true : undefined;
    }, 30_000);
    storage = await openRedisStorage({
      // With sentinels the URL's host is not used: the primary is whichever Sentinel names.
      url: 'redis://sentinel-named-primary',
      sentinels: [{ host: '127.0.0.1', port: sentinel.port }],
      sentinelName: NAME,
      prefix: 'sentinel:',
      maxReconnectDelayMs: 100,
    });
    await storage.sessionStore.guard.check();
  });

  after(async () => {
    onSentinel?.disconnect();
    onReplica?.disconnect();
    await storage?.close();
    await sentinel?.close();
    await replica?.close();
    await primary?.close();
  });

  it('writes again on the promoted replica without a restart', { timeout: 60_000 }, async () => {
    const before = pendingRecord();
    await storage.sessionStore.create(before);
    assert.deepEqual(await storage.payments.claim(pendingPayment(), RETENTION_MS), { claimed: true });
    // Sentinel's primary is the one started first.
    const [, namedPort] = (await onSentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)) as string[];
    assert.equal(Number(namedPort), primary.port);
    // Everything written so far is on the replica before the primary dies (this test is about following).
    await eventually(async () => ((await onReplica.exists(`sentinel:session:${before.sessionId}`)) ? true : undefined));

    await primary.stop('SIGKILL');
    const after = await eventually(async () => {
      const record = pendingRecord();
      try {
        await storage.sessionStore.create(record);
        return record;
      } catch {
        return undefined;
      }
    }, 45_000);
    assert.match(await onReplica.info('replication'), /role:master/, 'Sentinel promoted the replica');
    // Sentinel's +switch-master may still reconnect the connections once (a 503 a retry gets past).
    const settled = <T>(step: () => Promise<T>) => eventually(() => step().catch(() => undefined), 10_000);
    assert.equal((await settled(() => storage.sessionStore.get(after.sessionId)))?.sessionId, after.sessionId);
    assert.equal((await settled(() => storage.sessionStore.get(before.sessionId)))?.sessionId, before.sessionId);
    assert.deepEqual(await settled(() => storage.payments.claim(pendingPayment(), RETENTION_MS)), { claimed: true });
  });
});
