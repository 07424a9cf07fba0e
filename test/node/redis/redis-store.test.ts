// The Redis SessionStore against a real redis-server, with two store instances standing in for two
// proxy instances sharing one Redis.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { SessionBackendUnavailableError } from '../../../proxy/storage/errors.ts';
import { openRedisSessionStore, type RedisSessionStore } from '../../../proxy/storage/redis/session-store.ts';
import { redisSkipReason, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';
import { FAILURE, SUCCESS, eventually, inspector, pendingRecord, randomId } from './support.ts';

const skip = redisSkipReason();
const GRACE_MS = 60_000;

describe('Redis session store', { skip }, () => {
  let server: RedisServer;
  let storeA: RedisSessionStore;
  let storeB: RedisSessionStore;
  let raw: Redis;

  before(async () => {
    server = await startRedisServer();
    const options = {
      url: server.url,
      graceMs: GRACE_MS,
      idempotencyWaitMs: 1_000,
      pendingClaimTtlMs: 5_000,
      maxReconnectDelayMs: 200,
    };
    storeA = await openRedisSessionStore(options);
    storeB = await openRedisSessionStore(options);
    raw = inspector(server.url);
  });

  after(async () => {
    await storeA?.close();
    await storeB?.close();
    raw?.disconnect();
    await server?.close();
  });

  describe('sessions', () => {
    it('returns a created session from another instance, found by id and by notification reference', async () => {
      const record = pendingRecord();
      await storeA.create(record);
      assert.deepEqual(await storeB.get(record.sessionId), record);
      assert.deepEqual(await storeB.getByNotificationRef(record.notificationRef), record);
    });

    it('refuses to create a session whose id already exists, keeping the first', async () => {
      const record = pendingRecord();
      await storeA.create(record);
      await storeA.settle(record.sessionId, SUCCESS);
      // Redis answered (with a refusal): a bug to report as such, not an outage to retry.
      await assert.rejects(
        storeB.create({ ...record, notificationRef: randomId() }),
        (error: Error) => /already exists/.test(error.message) && !(error instanceof SessionBackendUnavailableError),
      );
      assert.deepEqual((await storeA.get(record.sessionId))?.outcome, SUCCESS);
    });

    it('returns undefined for an unknown session id or notification reference', async () => {
      assert.equal(await storeA.get(randomId()), undefined);
      assert.equal(await storeA.getByNotificationRef(randomId()), undefined);
    });

    it('reports a session past its expiry as expired', async () => {
      const record = pendingRecord(-1_000);
      await storeA.create(record);
      assert.equal((await storeB.get(record.sessionId))?.state, 'expired');
    });

    it('keeps a session and its reference for the session lifetime plus the grace period', async () => {
      const record = pendingRecord(10 * 60 * 1000);
      const lifetime = record.expiresAt - Date.now() + GRACE_MS;
      await storeA.create(record);
      for (const key of [storeA.keys.session(record.sessionId), storeA.keys.notificationRef(record.notificationRef)]) {
        const ttl = await raw.pttl(key);
        assert.ok(ttl > lifetime - 5_000 && ttl <= lifetime, `${key}: TTL ${ttl} ms, expected about ${lifetime} ms`);
      }
    });

    it('keeps the TTL when the session settles', async () => {
      const record = pendingRecord();
      await storeA.create(record);
      await storeA.settle(record.sessionId, SUCCESS);
      assert.ok((await raw.pttl(storeA.keys.session(record.sessionId))) > 0);
    });

    it('puts every key under the configured prefix', async () => {
      const store = await openRedisSessionStore({ url: server.url, prefix: 'tenant-7:' });
      try {
        const record = pendingRecord();
        await store.create(record);
        await store.mark(`webhook:${randomId()}`, record.sessionId, 60_000);
        await store.claimIdempotencyKey(randomId(), 60_000);
        const keys = await raw.keys('*');
        const mine = keys.filter((k) => k.includes(record.sessionId) || k.includes(record.notificationRef));
        assert.equal(mine.length, 2);
        assert.ok(mine.every((k) => k.startsWith('tenant-7:')));
        // The session, its reference, the marker, the idempotency key, and the generation mark (storage/redis/guard.ts).
        assert.equal(keys.filter((k) => k.startsWith('tenant-7:')).length, 5);
        assert.ok(keys.includes('tenant-7:generation'));
      } finally {
        await store.close();
      }
    });

    it('moves pending to returned, and leaves a settled session alone', async () => {
      const record = pendingRecord();
      await storeA.create(record);
      assert.equal((await storeB.markReturned(record.sessionId))?.state, 'returned');
      await storeA.settle(record.sessionId, FAILURE);
      assert.equal((await storeB.markReturned(record.sessionId))?.state, 'failed');
      assert.equal(await storeB.markReturned(randomId()), undefined);
    });
  });

  describe('settle', () => {
    it('stores the outcome and moves the session to its terminal state', async () => {
      const record = pendingRecord();
      await storeA.create(record);
      const result = await storeB.settle(record.sessionId, SUCCESS);
      assert.equal(result.stored, true);
      assert.deepEqual(result.record, { ...record, state: 'succeeded', outcome: SUCCESS });
      assert.deepEqual(await storeA.get(record.sessionId), result.record);
    });

    it('lets exactly one of many concurrent settles from two instances win', async () => {
      const record = pendingRecord();
      await storeA.create(record);
      const attempts = Array.from({ length: 20 }, (_, i) => {
        const store = i % 2 === 0 ? storeA : storeB;
        const outcome = i % 2 === 0 ? SUCCESS : { ...FAILURE, message: `attempt ${i}` };
        return store.settle(record.sessionId, outcome);
      });
      const results = await Promise.all(attempts);
      const winners = results.filter((r) => r.stored);
      assert.equal(winners.length, 1);
      const winning = winners[0]?.record.outcome;
      // Every caller, winner or not, sees the winning outcome, and so does a later read.
      for (const r of results) assert.deepEqual(r.record.outcome, winning);
      assert.deepEqual((await storeA.get(record.sessionId))?.outcome, winning);
    });

    it('does not replace a stored outcome', async () => {
      const record = pendingRecord();
      await storeA.create(record);
      await storeA.settle(record.sessionId, FAILURE);
      const second = await storeB.settle(record.sessionId, SUCCESS);
      assert.equal(second.stored, false);
      assert.deepEqual(second.record.outcome, FAILURE);
      assert.equal(second.record.state, 'failed');
    });

    it('refuses an outcome for an expired session and reports it expired', async () => {
      const record = pendingRecord(-1_000);
      await storeA.create(record);
      const result = await storeB.settle(record.sessionId, SUCCESS);
      assert.equal(result.stored, false);
      assert.equal(result.record.state, 'expired');
      assert.equal(result.record.outcome, undefined);
    });

    it('rejects for an unknown session', async () => {
      await assert.rejects(storeA.settle(randomId(), SUCCESS), /unknown session/);
    });
  });

  describe('idempotency keys', () => {
    it('gives the key to the first start only', async () => {
      const key = randomId();
      assert.deepEqual(await storeA.claimIdempotencyKey(key, 60_000), { claimed: true });
      await storeA.completeIdempotencyKey(key, 'session-1', 60_000);
      assert.deepEqual(await storeB.claimIdempotencyKey(key, 60_000), { claimed: false, sessionId: 'session-1' });
    });

    it('makes a concurrent duplicate on another instance wait for the first start to complete', async () => {
      const key = randomId();
      await storeA.claimIdempotencyKey(key, 60_000);
      const duplicate = storeB.claimIdempotencyKey(key, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await storeA.completeIdempotencyKey(key, 'session-2', 60_000);
      assert.deepEqual(await duplicate, { claimed: false, sessionId: 'session-2' });
    });

    it('tells a waiting duplicate that the first start failed and released the key', async () => {
      const key = randomId();
      await storeA.claimIdempotencyKey(key, 60_000);
      const duplicate = storeB.claimIdempotencyKey(key, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await storeA.releaseIdempotencyKey(key);
      assert.deepEqual(await duplicate, { claimed: false });
      assert.deepEqual(await storeB.claimIdempotencyKey(key, 60_000), { claimed: true });
    });

    it('stops a duplicate waiting on a start that never finishes', async () => {
      const key = randomId();
      await storeA.claimIdempotencyKey(key, 60_000);
      assert.deepEqual(await storeB.claimIdempotencyKey(key, 60_000), { claimed: false });
    });

    it('frees the key of a start whose instance died before completing or releasing it', async () => {
      const dying = await openRedisSessionStore({ url: server.url, pendingClaimTtlMs: 100 });
      const key = randomId();
      try {
        assert.deepEqual(await dying.claimIdempotencyKey(key, 60_000), { claimed: true });
      } finally {
        await dying.close();
      }
      await eventually(async () => ((await raw.exists(storeA.keys.idempotency(key))) === 0 ? true : undefined), 2_000);
      assert.deepEqual(await storeB.claimIdempotencyKey(key, 60_000), { claimed: true });
    });

    it("renews a live start's claim past its lease, and frees it promptly once that instance is gone (SIGKILL-like: no release)", async () => {
      const holder = await openRedisSessionStore({ url: server.url, pendingClaimTtlMs: 300 });
      const key = randomId();
      assert.deepEqual(await holder.claimIdempotencyKey(key, 60_000), { claimed: true });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.equal(await raw.exists(storeA.keys.idempotency(key)), 1, 'a running start keeps its claim');
      // The instance dies: its connection goes, its timers with it; nothing releases the claim.
      holder.redis.disconnect();
      const diedAt = Date.now();
      await eventually(async () => ((await raw.exists(storeA.keys.idempotency(key))) === 0 ? true : undefined), 2_000);
      assert.ok(Date.now() - diedAt < 1_500, 'free within the lease');
      assert.deepEqual(await storeB.claimIdempotencyKey(key, 60_000), { claimed: true });
      await holder.close().catch(() => undefined);
    });

    it('does not release a completed key', async () => {
      const key = randomId();
      await storeA.claimIdempotencyKey(key, 60_000);
      await storeA.completeIdempotencyKey(key, 'session-3', 60_000);
      await storeB.releaseIdempotencyKey(key);
      assert.deepEqual(await storeB.claimIdempotencyKey(key, 60_000), { claimed: false, sessionId: 'session-3' });
    });

    it('expires a pending claim after the claim TTL, and a completed key after its own TTL', async () => {
      const key = randomId();
      await storeA.claimIdempotencyKey(key, 60_000);
      const pendingTtl = await raw.pttl(storeA.keys.idempotency(key));
      assert.ok(pendingTtl > 0 && pendingTtl <= 5_000, `pending TTL ${pendingTtl}`);
      await storeA.completeIdempotencyKey(key, 'session-4', 60_000);
      const doneTtl = await raw.pttl(storeA.keys.idempotency(key));
      assert.ok(doneTtl > 5_000 && doneTtl <= 60_000, `completed TTL ${doneTtl}`);
    });
  });

  describe('markers (webhook ids, references, single use)', () => {
    it('binds a marker to its first value across instances, with a TTL', async () => {
      const key = `webhook:msg_${randomId()}`;
      assert.equal(await storeA.mark(key, 'session-a', 60_000), 'session-a');
      assert.equal(await storeB.mark(key, 'session-b', 60_000), 'session-a');
      assert.equal(await storeB.readMark(key), 'session-a');
      const ttl = await raw.pttl(storeA.keys.mark(key));
      assert.ok(ttl > 0 && ttl <= 60_000);
    });

    it('lets exactly one of concurrent claims of the same marker win', async () => {
      const key = `redeemed:${randomId()}`;
      const claims = Array.from({ length: 10 }, (_, i) => `claim-${i}`);
      const held = await Promise.all(claims.map((claim, i) => (i % 2 ? storeA : storeB).mark(key, claim, 60_000)));
      assert.equal(new Set(held).size, 1);
      assert.equal(held.filter((value, i) => value === claims[i]).length, 1);
    });

    it('forgets a marker after its TTL, and at once when removed', async () => {
      const key = `webhook:msg_${randomId()}`;
      assert.equal(await storeA.mark(key, 'a', 50), 'a');
      await eventually(async () => ((await raw.exists(storeA.keys.mark(key))) === 0 ? true : undefined), 2_000);
      assert.equal(await storeB.mark(key, 'b', 60_000), 'b');
      await storeA.unmark(key);
      assert.equal(await storeB.readMark(key), undefined);
    });
  });

  describe('rate-limit counters', () => {
    it('shares one client budget between instances', async () => {
      const limiterA = storeA.rateLimitStore('starts');
      const limiterB = storeB.rateLimitStore('starts');
      limiterA.init?.({ windowMs: 60_000 } as never);
      limiterB.init?.({ windowMs: 60_000 } as never);
      const client = `203.0.113.${Math.floor(Math.random() * 250)}-${randomId()}`;
      await limiterA.increment(client);
      await limiterB.increment(client);
      const third = await limiterA.increment(client);
      assert.equal(third.totalHits, 3);
      const ttl = await raw.pttl(`${storeA.keys.rateLimit('starts')}${client}`);
      assert.ok(ttl > 0 && ttl <= 60_000);
    });
  });
});

describe('Redis session store while Redis is down', { skip }, () => {
  let server: RedisServer;
  let store: RedisSessionStore;

  before(async () => {
    server = await startRedisServer({ persistent: true });
    store = await openRedisSessionStore({ url: server.url, maxReconnectDelayMs: 100 });
  });

  after(async () => {
    await store?.close();
    await server?.close();
  });

  it('rejects settle instead of queueing it, and settles once Redis is back with the session intact', async () => {
    const record = pendingRecord();
    await store.create(record);
    const limiter = store.rateLimitStore('outage');
    limiter.init?.({ windowMs: 60_000 } as never);
    await server.stop('SIGKILL');
    // Rejected with the backend-neutral error the routes turn into 503 + Retry-After.
    const unavailable = (promise: Promise<unknown>) =>
      promise.then(
        () => 'resolved',
        (error: unknown) => (error instanceof SessionBackendUnavailableError ? 'unavailable' : String(error)),
      );
    const settled = unavailable(store.settle(record.sessionId, SUCCESS));
    const remembered = unavailable(store.mark(`webhook:${randomId()}`, record.sessionId, 1_000));
    const read = unavailable(store.get(record.sessionId));
    const claimed = unavailable(store.claimIdempotencyKey(randomId(), 1_000));
    const counted = unavailable(Promise.resolve().then(() => limiter.increment('203.0.113.9')));
    await server.start();
    // Issued while Redis was down, they must have failed, not waited to run once it is back.
    assert.deepEqual(await Promise.all([settled, remembered, read, claimed, counted]), Array(5).fill('unavailable'));
    const result = await eventually(() => store.settle(record.sessionId, SUCCESS));
    assert.equal(result.stored, true);
    assert.deepEqual((await store.get(record.sessionId))?.outcome, SUCCESS);
  });

  it('keeps a settled outcome across a Redis crash (appendonly, fsync always)', async () => {
    await store.ready();
    const record = pendingRecord();
    await store.create(record);
    await store.settle(record.sessionId, FAILURE);
    await server.stop('SIGKILL');
    await server.start();
    const after = await eventually(() => store.get(record.sessionId));
    assert.deepEqual(after.outcome, FAILURE);
    assert.equal((await store.settle(record.sessionId, SUCCESS)).stored, false);
  });
});
