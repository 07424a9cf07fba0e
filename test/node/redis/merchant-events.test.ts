// Merchant events with the Redis outbox, several instances on one real redis-server: a killed
// instance's pending deliveries (and its sessions' expiry) are taken over by another; each event is
// sent by one instance at a time; pending deliveries survive a Redis restart; GET /events on any
// instance returns, in order, what a merchant missed during an outage.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startProvider, type RunningProvider } from '../../../sandbox/index.ts';
import type { ListedEvent, MerchantEvent, ObvProxyOptions } from '../../../proxy/index.ts';
import { postLinkSession, ProxyProcess } from '../../chaos/cluster.ts';
import { EVENTS_SECRET, startMerchantEndpoint, type MerchantEndpoint } from '../../helpers/merchant-endpoint.ts';
import { redisSkipReason, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';
import { CHECKOUT, postVerification, startInstance, type ProxyInstance } from './cluster.ts';
import { eventually } from './support.ts';
import { describeOutboxContract } from '../../helpers/outbox-contract.ts';
import { captureLogs } from '../../helpers/log-capture.ts';
import { cancelSession } from '../../helpers/session-requests.ts';
import { RedisEventOutbox } from '../../../proxy/storage/redis/outbox.ts';
import { redisKeys } from '../../../proxy/storage/redis/keys.ts';
import { openRedisSessionStore, type RedisSessionStore } from '../../../proxy/storage/redis/session-store.ts';

const skip = redisSkipReason();

describe('RedisEventOutbox', { skip }, () => {
  let redis: RedisServer;
  let store: RedisSessionStore;
  let outboxes = 0;
  before(async () => {
    redis = await startRedisServer();
    store = await openRedisSessionStore({ url: redis.url });
  });
  after(async () => {
    await store?.close();
    await redis?.close();
  });
  // A fresh prefix per test: an empty outbox on the same server.
  describeOutboxContract(
    'RedisEventOutbox',
    () => new RedisEventOutbox(store.redis, redisKeys(`outbox-${++outboxes}:`)),
  );
});
const API_KEY = 'merchant-events-redis-test-key-0123456789';
/** A lease longer than an attempt's time-out, so a live instance's attempt is never taken over. */
const TIMINGS = {
  retryDelaysMs: [100, 200, 300, 400, 500, 600, 700, 800, 900, 1_000],
  attemptTimeoutMs: 800,
  leaseMs: 1_500,
  pollIntervalMs: 50,
  sessionCheckDelayMs: 50,
};

function eventsOptions(endpoint: MerchantEndpoint): Partial<ObvProxyOptions> {
  return { eventsUrl: endpoint.url, eventsSecrets: [EVENTS_SECRET], eventTimings: TIMINGS, merchantApiKey: API_KEY };
}

async function listEvents(
  instance: { url: string },
  query = '',
): Promise<{ events: MerchantEvent[]; hasMore: boolean }> {
  const response = await fetch(`${instance.url}/obv/events${query}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  assert.equal(response.status, 200);
  return (await response.json()) as { events: MerchantEvent[]; hasMore: boolean };
}

const order = (i: number) => ({
  merchantUserId: 'user-42',
  merchantTransactionId: `order-${i}`,
  amount: '49.99',
  currency: 'USD',
});

describe('merchant events on Redis, several instances', { skip }, () => {
  let redis: RedisServer;
  let provider: RunningProvider;
  let endpoint: MerchantEndpoint;
  const instances: ProxyInstance[] = [];

  before(async () => {
    redis = await startRedisServer({ persistent: true });
    provider = await startProvider();
    endpoint = await startMerchantEndpoint();
  });
  after(async () => {
    await Promise.all(instances.map((instance) => instance.kill()));
    await endpoint?.close();
    await provider?.close();
    await redis?.close();
  });

  const instance = async (prefix: string) => {
    const started = await startInstance({
      provider,
      redisUrl: redis.url,
      redisPrefix: prefix,
      extra: eventsOptions(endpoint),
    });
    instances.push(started);
    return started;
  };

  it(
    "a killed instance's pending delivery and its session's expiry are taken over by another instance",
    { timeout: 60_000 },
    async () => {
      endpoint.answer = () => 'hang';
      const a = new ProxyProcess('events-a', {
        providerUrl: provider.url,
        redisUrl: redis.url,
        logDir: 'test-results/merchant-events',
        script: 'test/helpers/events-proxy-child.ts',
        env: {
          OBV_EVENTS_URL: endpoint.url,
          OBV_EVENTS_SECRETS: EVENTS_SECRET,
          OBV_REDIS_PREFIX: 'kill:',
          OBV_SESSION_TTL: '3s',
          TEST_EVENT_TIMINGS: JSON.stringify(TIMINGS),
        },
      });
      await a.start();
      try {
        const start = async () => {
          const made = await postLinkSession(a.url, CHECKOUT);
          assert.equal(made.status, 201);
          const { linkToken } = (await made.json()) as { linkToken: string };
          const response = await postVerification({ url: a.url } as ProxyInstance, {}, linkToken);
          assert.equal(response.status, 201);
          return (await response.json()) as { sessionId: string };
        };
        const cancelled = await start();
        const expiring = await start();
        const cancel = await cancelSession(`${a.url}/obv`, cancelled.sessionId, { origin: a.url });
        assert.equal(cancel.status, 200);
        // A's attempt reached the merchant, which has not answered yet: then A dies (no goodbye).
        const hung = await eventually(() => endpoint.deliveries.find((d) => d.event?.type === 'link.cancelled'));
        await a.kill();
        endpoint.answer = () => 'ok';

        const b = await instance('kill:');
        const delivered = await endpoint.waitForDistinct(2, 20_000);
        const byType = new Map(delivered.map((event) => [event.type, event]));
        // The same event (the id the merchant de-duplicates on), now answered, sent by B.
        assert.equal(byType.get('link.cancelled')?.id, hung.event!.id);
        assert.equal(byType.get('link.expired')?.data.merchantTransactionId, 'order-1001');
        assert.equal(endpoint.deliveries.filter((d) => d.event?.id === hung.event!.id).length, 2);
        // B's list has both, in the order they were recorded (the expiry came last).
        const listed = await listEvents(b);
        assert.deepEqual(
          listed.events.map((event) => event.type),
          ['link.cancelled', 'link.expired'],
        );
        assert.ok(expiring.sessionId);
      } finally {
        await a.kill();
        endpoint.deliveries.length = 0;
      }
    },
  );

  it('with two live instances each event is delivered once, by one of them', { timeout: 60_000 }, async () => {
    endpoint.answer = () => ({ delayMs: 50 });
    const [a, b] = [await instance('shared:'), await instance('shared:')];
    const emitted = [];
    for (let i = 0; i < 20; i++) emitted.push(await (i % 2 ? a : b).proxy.events.emit('link.cancelled', order(i)));
    await endpoint.waitForDistinct(20, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const ids = endpoint.deliveries.map((d) => d.event?.id);
    assert.equal(ids.length, 20, 'no event was sent twice');
    assert.deepEqual(new Set(ids), new Set(emitted.map((event) => event!.id)));
    endpoint.deliveries.length = 0;
  });

  it(
    'after an outage GET /events?delivery=undelivered on any instance returns what the merchant missed, in order, and the deliveries survive a Redis restart',
    { timeout: 60_000 },
    async () => {
      endpoint.answer = () => 'ok';
      const [a, b] = [await instance('outage:'), await instance('outage:')];
      const seen = await a.proxy.events.emit('link.cancelled', order(100));
      await endpoint.waitForDistinct(1);
      await endpoint.down();
      const missed = [];
      for (let i = 101; i < 106; i++) missed.push(await (i % 2 ? a : b).proxy.events.emit('link.cancelled', order(i)));
      // Redis dies and comes back with the pending deliveries (append-only file) while the merchant is down.
      await redis.stop('SIGKILL');
      await redis.start();
      const caughtUp = await eventually(async () => {
        const page = await listEvents(b, '?delivery=undelivered').catch(() => undefined);
        return page?.events.length === 5 ? page : undefined;
      }, 15_000);
      assert.deepEqual(
        caughtUp.events.map((event) => event.id),
        missed.map((event) => event!.id),
      );
      assert.deepEqual(
        caughtUp.events.map((event) => (event.data as { merchantTransactionId?: string }).merchantTransactionId),
        ['order-101', 'order-102', 'order-103', 'order-104', 'order-105'],
      );
      assert.equal(caughtUp.hasMore, false);
      assert.ok(caughtUp.events.every((event) => (event as unknown as ListedEvent).delivery.state === 'pending'));
      await endpoint.up();
      const delivered = await endpoint.waitForDistinct(6, 20_000);
      assert.deepEqual(
        new Set(delivered.map((event) => event.id)),
        new Set([seen!.id, ...missed.map((event) => event!.id)]),
      );
      endpoint.deliveries.length = 0;
    },
  );

  it(
    'an event acknowledged on one instance is pushed by none any more; a redelivery asked of one is sent once, by one',
    { timeout: 60_000 },
    async () => {
      const [a, b] = [await instance('ack:'), await instance('ack:')];
      const refused = await a.proxy.events.emit('link.succeeded', {
        ...order(300),
        linkRef: 'ref-300',
        accountLabel: 'Checking ••••4321',
        fiName: 'Bank',
        fiAccountType: 'CHECKING',
      });
      endpoint.answer = ({ event }) => (event?.id === refused!.id ? 'fail' : 'ok');
      const pushes = () => endpoint.deliveries.filter((d) => d.event?.id === refused!.id).length;
      await eventually(() => pushes() >= 2 || undefined, 15_000);
      const [missed] = (await listEvents(b, '?delivery=undelivered')).events as unknown as ListedEvent[];
      assert.equal(missed?.id, refused!.id);
      assert.equal(missed!.delivery.lastError, 'answered 500');
      const ack = await fetch(`${b.url}/obv/events/${refused!.id}/ack`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      assert.equal(ack.status, 200);
      const afterAck = pushes();
      // Several retry steps later (100–1 000 ms each): at most the attempt that was already under way.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      assert.ok(pushes() <= afterAck + 1, `${pushes() - afterAck} pushes after the acknowledgement`);
      const listedOnA = ((await listEvents(a, '?limit=100')).events as unknown as ListedEvent[]).find(
        (event) => event.id === refused!.id,
      );
      assert.deepEqual([listedOnA?.delivery.state, listedOnA?.delivery.acknowledgedBy], ['delivered', 'api']);
      assert.deepEqual((await listEvents(a, '?delivery=undelivered')).events, []);

      endpoint.answer = () => 'ok';
      const before = pushes();
      const redeliver = await fetch(`${a.url}/obv/events/${refused!.id}/redeliver`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      assert.equal(redeliver.status, 202);
      await eventually(() => pushes() === before + 1 || undefined, 15_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(pushes(), before + 1, 'one instance sent it, once');
      endpoint.deliveries.length = 0;
    },
  );

  it(
    "while Redis is down the delivery worker says so once (the outage's line, not one per poll), and delivers again once it is back",
    { timeout: 60_000 },
    async () => {
      endpoint.answer = () => 'ok';
      const logs = captureLogs('debug');
      const started = await startInstance({
        provider,
        redisUrl: redis.url,
        redisPrefix: 'quiet:',
        logger: logs.logger,
        extra: eventsOptions(endpoint),
      });
      instances.push(started);
      await started.proxy.events.emit('link.cancelled', order(200));
      await endpoint.waitForDistinct(1);
      await redis.stop('SIGKILL');
      // 20 polls a second for 1.5 s: each one fails to claim.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      assert.equal(logs.find('session store is unavailable').length, 1);
      assert.equal(
        logs.find('merchant events: the outbox cannot be read').length,
        0,
        'counted by the outage log, not told again',
      );
      await redis.start();
      const after = await eventually(
        () => started.proxy.events.emit('link.cancelled', order(201)).catch(() => undefined),
        15_000,
      );
      const delivered = await endpoint.waitForDistinct(2, 15_000);
      assert.ok(delivered.some((event) => event.id === after!.id));
      const back = await eventually(() => logs.find('session store is back')[0], 15_000);
      assert.ok(Number((back.refused as { eventJobs?: number }).eventJobs) > 1, 'the failed polls are counted');
    },
  );
});
