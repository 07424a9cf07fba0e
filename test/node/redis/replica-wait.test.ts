// Money writes wait for a replica (OBV_REDIS_MIN_REPLICAS, storage/redis/replicas.ts), with a real
// redis-server primary and a replica: a claim, a result, a session, its outcome and an event are answered
// only once the replica has them, and an outcome not confirmed is not shown; a replica that stops acknowledging (SIGSTOP) makes a payment answer 503 before the
// provider is called, and the order stays payable.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { createLogger, createStorage, type Storage } from '../../../proxy/index.ts';
import { randomEventId } from '../../../proxy/events/ids.ts';
import { SessionBackendUnavailableError } from '../../../proxy/storage/errors.ts';
import { openRedisStorage, type RedisStorage } from '../../../proxy/storage/redis/storage.ts';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { captureLogs } from '../../helpers/log-capture.ts';
import { startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { redisSkipReason, replicaLinked, startRedisPair, type RedisServer } from '../../helpers/redis-server.ts';
import { lookupSession } from '../../helpers/session-requests.ts';
import { eventually, inspector, pendingPayment, pendingRecord, randomId, SUCCESS } from './support.ts';

const skip = redisSkipReason();
const RETENTION_MS = 60_000;
const REPLICA_TIMEOUT_MS = 400;

/** Whether `promise` is still unsettled after `ms`. */
async function stillPending(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setTimeout(resolve, ms));
  return !settled;
}

describe('money writes wait for a replica (storage)', { skip }, () => {
  let primary: RedisServer;
  let replica: RedisServer;
  let onReplica: Redis;
  let storage: RedisStorage;

  before(async () => {
    ({ primary, replica } = await startRedisPair());
    onReplica = inspector(replica.url);
    storage = await openRedisStorage({
      url: primary.url,
      prefix: 'wait:',
      minReplicas: 1,
      // Longer than the pause below: the write must wait for the replica rather than give up.
      replicaTimeoutMs: 5_000,
      maxReconnectDelayMs: 100,
    });
    await storage.sessionStore.guard.check();
  });

  after(async () => {
    onReplica?.disconnect();
    await storage?.close();
    await replica?.close();
    await primary?.close();
  });

  it('a claim, a result, a session, its outcome and an event are answered only once the replica has them', async () => {
    const claim = pendingPayment();
    replica.pause();
    const claimed = storage.payments.claim(claim, RETENTION_MS);
    try {
      assert.ok(await stillPending(claimed, 500), 'the claim was answered while the replica was frozen');
    } finally {
      replica.resume();
    }
    assert.deepEqual(await claimed, { claimed: true });
    // Answered, so the replica has it: read there, at once.
    assert.ok(await onReplica.get(`wait:payment:${claim.merchantTransactionId}`), 'the replica has the claim');

    const { leaseExpiresAt: _lease, ...rest } = claim;
    replica.pause();
    const finished = storage.payments.finish({ ...rest, state: 'completed', providerStatus: 201 }, RETENTION_MS);
    try {
      assert.ok(await stillPending(finished, 300), 'the result was answered while the replica was frozen');
    } finally {
      replica.resume();
    }
    assert.equal(await finished, true);
    assert.match((await onReplica.get(`wait:payment:${claim.merchantTransactionId}`))!, /"completed"/);

    const session = pendingRecord();
    replica.pause();
    const created = storage.sessionStore.create(session);
    try {
      assert.ok(await stillPending(created, 300), 'the session was answered while the replica was frozen');
    } finally {
      replica.resume();
    }
    await created;
    assert.ok(await onReplica.exists(`wait:session:${session.sessionId}`), 'the replica has the session');
    replica.pause();
    const settled = storage.sessionStore.settle(session.sessionId, SUCCESS);
    try {
      assert.ok(await stillPending(settled, 300), 'the outcome was answered while the replica was frozen');
    } finally {
      replica.resume();
    }
    assert.equal((await settled).stored, true);
    assert.equal(await onReplica.hget(`wait:session:${session.sessionId}`, 'state'), 'succeeded');

    const eventId = randomEventId();
    replica.pause();
    const appended = storage.eventOutbox.append(
      {
        id: eventId,
        type: 'link.cancelled',
        createdAt: new Date().toISOString(),
        data: { merchantTransactionId: 'order-1' },
      },
      Date.now(),
    );
    try {
      assert.ok(await stillPending(appended, 300), 'the event was answered while the replica was frozen');
    } finally {
      replica.resume();
    }
    assert.equal(await appended, true);
    assert.ok(await onReplica.exists(`wait:evt:${eventId}`), 'the replica has the event');
  });

  it('says once at boot when a replica is connected but none waited for (production), or fewer than asked for', async () => {
    for (const [minReplicas, words, level] of [
      [0, 'replica(s) connected but OBV_REDIS_MIN_REPLICAS is 0', 40],
      [2, 'OBV_REDIS_MIN_REPLICAS is 2 but 1 replica(s) are connected', 50],
    ] as const) {
      const logs = captureLogs('info');
      const other = await openRedisStorage({
        url: primary.url,
        prefix: 'wait:',
        requirePersistence: true,
        minReplicas,
        logger: logs.logger,
      });
      try {
        await other.sessionStore.guard.check();
        await other.sessionStore.guard.check();
        const lines = logs.find(words);
        assert.equal(lines.length, 1, logs.lines.join('\n'));
        assert.equal(lines[0]!.level, level);
      } finally {
        await other.close();
      }
    }
  });
});

describe('a replica that stops acknowledging (proxy)', { skip }, () => {
  let primary: RedisServer;
  let replica: RedisServer;
  let backend: Storage;
  let pair: ProxyPair;

  before(async () => {
    ({ primary, replica } = await startRedisPair());
    backend = createStorage({
      kind: 'redis',
      redisUrl: primary.url,
      redisPrefix: 'obv:',
      redisMinReplicas: 1,
      redisReplicaTimeoutMs: REPLICA_TIMEOUT_MS,
      logger: createLogger('silent'),
    });
    pair = await startProxyPair({ proxy: { backend } });
  });

  after(async () => {
    await pair?.close();
    await backend?.close();
    await replica?.close();
    await primary?.close();
  });

  it('answers a payment 503 without calling the provider, and the order is paid once the replica is back', async () => {
    const purchase = {
      merchantUserId: 'user-wait',
      merchantTransactionId: `order-wait-${randomId()}`,
      amount: '12.34',
      currency: 'USD',
      consumer: { firstName: 'Ana', lastName: 'López', email: 'ana@example.com' },
    };
    const { sessionId, consumerUrl } = await pair.startVerification(purchase);
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const view = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { outcome: { linkRef: string } };
    const pay = () =>
      fetch(`${pair.baseUrl}/transactions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${TEST_MERCHANT_API_KEY}`,
          'idempotency-key': `pay-${purchase.merchantTransactionId}`,
        },
        body: JSON.stringify({
          linkRef: view.outcome.linkRef,
          merchantUserId: purchase.merchantUserId,
          merchantTransactionId: purchase.merchantTransactionId,
          amount: purchase.amount,
          currency: purchase.currency,
        }),
      });
    const sentBefore = pair.provider.stats.transactions;

    replica.pause();
    let refused: Response;
    try {
      refused = await pay();
    } finally {
      replica.resume();
    }
    const body = (await refused.json()) as { type?: string };
    assert.equal(refused.status, 503, JSON.stringify(body));
    assert.ok(refused.headers.get('retry-after'), 'a 503 says when to retry');
    assert.match(String(body.type), /unavailable/);
    assert.equal(pair.provider.stats.transactions, sentBefore, 'the provider was called for an unconfirmed claim');

    // The claim was released (nothing was sent): the same request pays once the replica acknowledges.
    await replicaLinked(replica.url);
    const paid = await pay();
    assert.equal(paid.status, 201, await paid.clone().text());
    assert.equal(pair.provider.stats.transactions, sentBefore + 1);
  });

  it('a storage write that Redis could not confirm is a SessionBackendUnavailableError (503), never done', async () => {
    const order = pendingPayment();
    replica.pause();
    try {
      await assert.rejects(backend.payments.claim(order, RETENTION_MS), SessionBackendUnavailableError);
    } finally {
      replica.resume();
    }
    // Released: nothing holds the order.
    assert.equal(await backend.payments.get(order.merchantTransactionId), undefined);
  });

  it('an outcome whose settle was not confirmed is not shown until the replica has it', async () => {
    const session = pendingRecord();
    await backend.sessionStore.create(session);
    replica.pause();
    try {
      await assert.rejects(backend.sessionStore.settle(session.sessionId, SUCCESS), SessionBackendUnavailableError);
      // On the primary, not confirmed: a read must not hand its linkRef to the page.
      await assert.rejects(backend.sessionStore.get(session.sessionId), SessionBackendUnavailableError);
    } finally {
      replica.resume();
    }
    const shown = await eventually(() => backend.sessionStore.get(session.sessionId).catch(() => undefined), 10_000);
    assert.equal(shown.state, 'succeeded');
  });
});
