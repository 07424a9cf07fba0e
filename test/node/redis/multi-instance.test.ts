// Two proxy instances (createObvProxy with OBV_REDIS_URL) sharing one redis-server and one sandbox
// provider: the whole flow with the notification and the browser's socket on different instances, an
// instance dying mid-flow, and Redis restarting mid-flow.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startProvider, type RunningProvider } from '../../../sandbox/index.ts';
import { SessionBackendUnavailableError } from '../../../proxy/storage/errors.ts';
import { openRedisStorage } from '../../../proxy/storage/redis/storage.ts';
import type { ResultBus } from '../../../proxy/storage/result-bus.ts';
import { redisSkipReason, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';
import {
  newLinkToken,
  postVerification,
  readSession,
  signInAtBank,
  startInstance,
  startLoadBalancer,
  startVerification,
  subscribe,
  type LoadBalancer,
  type ProxyInstance,
} from './cluster.ts';
import { eventually } from './support.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

const skip = redisSkipReason();

const GOOD_OUTCOME = {
  status: 'success',
  accountLabel: 'Checking ••••4321',
  fiName: 'Sandbox Federal Bank',
  fiAccountType: 'CHECKING',
  displayLabel: 'Checking ••••4321',
  spokenLabel: 'Checking ending in 4321',
};

describe('two proxy instances sharing Redis', { skip }, () => {
  let redis: RedisServer;
  let provider: RunningProvider;
  let balancer: LoadBalancer;
  let a: ProxyInstance;
  let b: ProxyInstance;
  let live: ProxyInstance[] = [];

  before(async () => {
    redis = await startRedisServer({ persistent: true });
    // Short retries: a notification refused during an outage comes back within a second or two.
    provider = await startProvider({
      notificationRetryDelaysMs: [100, 200, 300, 500, 500, 1_000, 1_000, 2_000, 2_000, 2_000],
      notificationTimeoutMs: 2_000,
    });
    balancer = await startLoadBalancer(() => live.map((instance) => instance.url));
    // Sessions started on `a` name `a` itself as their notification URL (and `b` likewise), so a test
    // knows which instance takes the notification. Instances started later sit behind the balancer.
    a = await startInstance({ provider, redisUrl: redis.url });
    b = await startInstance({ provider, redisUrl: redis.url });
    live = [a, b];
  });

  after(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    await balancer?.close();
    await provider?.close();
    await redis?.close();
  });

  it('relays an outcome taken by one instance to the browser connected to the other', async () => {
    const deliveredBefore = provider.stats.notificationsDelivered;
    const { sessionId, consumerUrl } = await startVerification(a);
    const browser = await subscribe(b, sessionId);
    await signInAtBank(consumerUrl);
    const result = await browser.next('result');
    const { linkRef, ...display } = result.outcome as { linkRef: string };
    assert.deepEqual(display, GOOD_OUTCOME);
    assert.match(linkRef, /^[A-Za-z0-9_-]{22}$/);
    await browser.closed;
    assert.equal(browser.messages.filter((m) => m.type === 'result').length, 1);
    await provider.notificationsSettled();
    assert.equal(provider.stats.notificationsDelivered, deliveredBefore + 1);
  });

  it('relays an outcome taken by the second instance to the browser connected to the first', async () => {
    const { sessionId, consumerUrl } = await startVerification(b);
    const browser = await subscribe(a, sessionId);
    await signInAtBank(consumerUrl, 'user_locked', 'x');
    const result = await browser.next('result');
    assert.deepEqual(result.outcome, {
      status: 'failure',
      code: 'ACCOUNT_LOCKED',
      message:
        'This account is locked at your bank. Link another account, or choose another way to pay; your bank can unlock this one.',
      text: 'This account is locked at your bank. Link another account, or choose another way to pay; your bank can unlock this one.',
      lang: 'en',
    });
  });

  it('answers POST /sessions/lookup with the same outcome on both instances', async () => {
    const { sessionId, consumerUrl } = await startVerification(a);
    await signInAtBank(consumerUrl, 'user_bad', 'anything');
    const fromB = await eventually(async () => {
      const view = await readSession(b, sessionId);
      return view.body.state === 'failed' ? view : undefined;
    });
    assert.deepEqual(fromB.body.outcome, {
      status: 'failure',
      code: 'ACCOUNT_NOT_VERIFIED',
      message: 'Your bank couldn’t verify this account. Try another account, or choose another way to pay.',
      text: 'Your bank couldn’t verify this account. Try another account, or choose another way to pay.',
      lang: 'en',
    });
    assert.deepEqual((await readSession(a, sessionId)).body, fromB.body);
  });

  it('sends the browser one result when the provider delivers the notification twice', async () => {
    const duplicatesBefore = provider.stats.notificationDuplicates;
    provider.faults.duplicateNotifications = 1;
    try {
      const { sessionId, consumerUrl } = await startVerification(a);
      const browser = await subscribe(b, sessionId);
      await signInAtBank(consumerUrl);
      await browser.next('result');
      await provider.notificationsSettled();
      await browser.closed;
      assert.equal(provider.stats.notificationDuplicates, duplicatesBefore + 1);
      assert.equal(browser.messages.filter((m) => m.type === 'result').length, 1);
    } finally {
      provider.faults.duplicateNotifications = 0;
    }
  });

  it('refuses the notification whose outcome it stored but could not publish, and publishes it on the retry', async () => {
    // An instance whose publish connection fails once, right after the outcome reached the store.
    const backend = await openRedisStorage({ url: redis.url });
    let publishCalls = 0;
    const publishFailsOnce: ResultBus = {
      publish: (event) =>
        ++publishCalls === 1
          ? Promise.reject(new SessionBackendUnavailableError('publish failed'))
          : backend.resultBus.publish(event),
      subscribe: (sessionId, listener) => backend.resultBus.subscribe(sessionId, listener),
      close: () => backend.resultBus.close(),
    };
    const flaky = await startInstance({
      provider,
      redisUrl: redis.url,
      backend: { ...backend, resultBus: publishFailsOnce },
    });
    try {
      const { sessionId, consumerUrl } = await startVerification(flaky);
      // Subscribed before the outcome exists: only a publish can bring it to this socket.
      const browser = await subscribe(b, sessionId);
      const attemptsBefore = provider.stats.notificationAttempts;
      const deliveredBefore = provider.stats.notificationsDelivered;
      await signInAtBank(consumerUrl);
      const result = await browser.next('result');
      assert.equal((result.outcome as { status: string }).status, 'success');
      await provider.notificationsSettled();
      assert.equal(publishCalls, 2, 'published again on the retry');
      assert.ok(provider.stats.notificationAttempts >= attemptsBefore + 2, 'the first delivery was refused');
      assert.equal(provider.stats.notificationsDelivered, deliveredBefore + 1);
    } finally {
      await flaky.kill();
      await backend.close();
    }
  });

  it('loses nothing when the instance holding the browser dies mid-flow', async () => {
    const doomed = await startInstance({ provider, redisUrl: redis.url, publicUrl: balancer.url });
    live = [a, b, doomed];
    try {
      const { sessionId, consumerUrl } = await startVerification(doomed);
      const browser = await subscribe(doomed, sessionId);
      live = [a, b];
      await doomed.kill();
      await browser.closed;
      assert.equal(
        browser.messages.some((m) => m.type === 'result'),
        false,
      );
      // The consumer finishes at the bank while that instance is gone; the notification reaches another.
      await signInAtBank(consumerUrl, 'user_savings', 'pass_good');
      const stored = await eventually(async () => {
        const view = await readSession(b, sessionId);
        return view.body.state === 'succeeded' ? view : undefined;
      });
      // The browser reconnects (through the balancer it could land on any instance; here: a).
      const again = await subscribe(a, sessionId);
      const result = await again.next('result');
      assert.equal((result.outcome as { fiAccountType: string }).fiAccountType, 'SAVINGS');
      assert.deepEqual(result.outcome, stored.body.outcome);
    } finally {
      live = [a, b];
      await doomed.kill();
    }
  });

  it('keeps the outcome through a Redis restart: 503 during the outage, delivered after the retry', async () => {
    const { sessionId, consumerUrl } = await startVerification(a);
    const browser = await subscribe(b, sessionId);
    const attemptsBefore = provider.stats.notificationAttempts;
    const deliveredBefore = provider.stats.notificationsDelivered;

    await redis.stop('SIGKILL');
    try {
      await signInAtBank(consumerUrl);
      // The first delivery attempt hits the outage and is refused: the provider is already retrying
      // and nothing was acknowledged.
      await eventually(() => (provider.stats.notificationAttempts >= attemptsBefore + 2 ? true : undefined));
      assert.equal(provider.stats.notificationsDelivered, deliveredBefore);
      const during = await lookupSession(`${a.url}/obv`, sessionId);
      assert.equal(during.status, 503, `GET during the outage answered ${during.status}`);
      assert.equal(during.headers.get('retry-after'), '5');
      assert.equal(((await during.json()) as { type: string }).type, 'urn:obv-link:problem:session-store-unavailable');
    } finally {
      await redis.start();
    }

    // …and the provider's retry after Redis is back is stored, published and relayed across instances.
    const result = await browser.next('result');
    assert.equal((result.outcome as { status: string }).status, 'success');
    await provider.notificationsSettled();
    assert.equal(provider.stats.notificationsDelivered, deliveredBefore + 1);
    assert.equal((await readSession(a, sessionId)).body.state, 'succeeded');
  });
});

describe('limits and keys shared by two proxy instances', { skip }, () => {
  let redis: RedisServer;
  let provider: RunningProvider;
  let a: ProxyInstance;
  let b: ProxyInstance;

  before(async () => {
    redis = await startRedisServer();
    provider = await startProvider();
    a = await startInstance({ provider, redisUrl: redis.url, rateLimit: 3 });
    b = await startInstance({ provider, redisUrl: redis.url, rateLimit: 3 });
  });

  after(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    await provider?.close();
    await redis?.close();
  });

  it('answers a repeated Idempotency-Key on another instance with the same session', async () => {
    const headers = { 'idempotency-key': `checkout-${Date.now()}`, 'x-forwarded-for': '198.51.100.1' };
    const linkToken = await newLinkToken(a);
    const first = await postVerification(a, headers, linkToken);
    const second = await postVerification(b, headers, linkToken);
    assert.equal(first.status, 201);
    assert.equal(second.status, 201);
    assert.equal(
      ((await second.json()) as { sessionId: string }).sessionId,
      ((await first.json()) as { sessionId: string }).sessionId,
    );
    assert.equal(provider.stats.verificationRequests, 1);
  });

  it("counts a client's starts across instances against one rate limit", async () => {
    const client = { 'x-forwarded-for': '198.51.100.2' };
    assert.equal((await postVerification(a, client)).status, 201);
    assert.equal((await postVerification(b, client)).status, 201);
    assert.equal((await postVerification(a, client)).status, 201);
    const refused = await postVerification(b, client);
    assert.equal(refused.status, 429);
    assert.match(refused.headers.get('content-type') ?? '', /application\/problem\+json/);
    // Another client still has its own budget.
    assert.equal((await postVerification(a, { 'x-forwarded-for': '198.51.100.3' })).status, 201);
  });
});
