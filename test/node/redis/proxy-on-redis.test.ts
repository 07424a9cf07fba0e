// createObvProxy on Redis as `npm start` builds it (OBV_REDIS_URL, OBV_REDIS_PREFIX): where its keys go,
// and what every route answers while Redis cannot be reached — a 503 the provider and the element retry,
// the outage logged once (not once per failed request), never with the Redis URL's password.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { DEFAULT_WEBHOOK_SECRET, startProvider, type RunningProvider } from '../../../sandbox/index.ts';
import { captureLogs, type LogCapture } from '../../helpers/log-capture.ts';
import { redisSkipReason, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';
import { postNotification, successPayload } from '../../helpers/webhooks.ts';
import { newLinkToken, postVerification, startInstance, startVerification, type ProxyInstance } from './cluster.ts';
import { eventually, inspector, randomId } from './support.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

const skip = redisSkipReason();

const PROBLEM_TYPE = 'urn:obv-link:problem:session-store-unavailable';

/** Asserts the outage answer: 503 problem+json naming the session store, with Retry-After. */
async function assertStoreUnavailable(response: Response, what: string): Promise<void> {
  const body = (await response.json()) as { type?: string; status?: number };
  assert.equal(response.status, 503, `${what} answered ${response.status}`);
  assert.equal(response.headers.get('retry-after'), '5', `${what}: Retry-After`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/, `${what}: content type`);
  assert.equal(body.type, PROBLEM_TYPE, `${what}: problem type`);
  assert.equal(body.status, 503);
}

/** Error-level log lines (pino level 50 and up). */
function errorLines(logs: LogCapture): Record<string, unknown>[] {
  return logs.records().filter((record) => Number(record.level) >= 50);
}

/** The provider's record of the verification behind a consumerUrl (`…/consumer/{verificationId}?t=…`). */
function verificationOf(provider: RunningProvider, consumerUrl: string) {
  const verification = provider.state.verifications.get(new URL(consumerUrl).pathname.split('/').pop()!);
  assert.ok(verification?.notificationURL && verification.returnURL, "the provider holds the session's URLs");
  return { notificationURL: verification.notificationURL, returnURL: verification.returnURL };
}

describe('a proxy on Redis', { skip }, () => {
  let redis: RedisServer;
  let provider: RunningProvider;
  let raw: Redis;
  const instances: ProxyInstance[] = [];

  before(async () => {
    redis = await startRedisServer({ persistent: true });
    provider = await startProvider();
    raw = inspector(redis.url);
  });

  after(async () => {
    await Promise.all(instances.map((instance) => instance.kill()));
    raw?.disconnect();
    await provider?.close();
    await redis?.close();
  });

  it('keeps every key under OBV_REDIS_PREFIX', async () => {
    const instance = await startInstance({ provider, redisUrl: redis.url, redisPrefix: 'shop-eu:', rateLimit: 5 });
    instances.push(instance);
    const response = await postVerification(instance, { 'idempotency-key': `prefix-${randomId()}` });
    assert.equal(response.status, 201);
    await response.body?.cancel();
    const keys = await raw.keys('*');
    // A session, its notification reference, the idempotency key and the rate-limit counter.
    for (const kind of ['session:', 'ref:', 'idem:', 'rl:']) {
      assert.ok(
        keys.some((key) => key.startsWith(`shop-eu:${kind}`)),
        `no shop-eu:${kind} key in ${keys.join(', ')}`,
      );
    }
    assert.deepEqual(
      keys.filter((key) => !key.startsWith('shop-eu:')),
      [],
    );
  });

  it('answers 503 with Retry-After on every route while Redis is down, and logs the outage once', async () => {
    const logs = captureLogs('info');
    const instance = await startInstance({ provider, redisUrl: redis.url, logger: logs.logger });
    instances.push(instance);
    const { sessionId, consumerUrl } = await startVerification(instance);
    const { notificationURL: notificationUrl, returnURL } = verificationOf(provider, consumerUrl);
    const errorsBefore = errorLines(logs).length;
    // Made while Redis is up, as the merchant's server did before the outage.
    const linkToken = await newLinkToken(instance);

    await redis.stop('SIGKILL');
    try {
      await assertStoreUnavailable(
        await postNotification(notificationUrl, successPayload(), { secret: DEFAULT_WEBHOOK_SECRET }),
        'the notification',
      );
      await assertStoreUnavailable(await lookupSession(`${instance.url}/obv`, sessionId), 'POST /sessions/lookup');
      await assertStoreUnavailable(await fetch(returnURL), 'the return page');
      // Refused by the Redis-backed rate limiter before anything reaches the provider.
      const startsBefore = provider.stats.verificationRequests;
      await assertStoreUnavailable(await postVerification(instance, {}, linkToken), 'POST /verifications');
      assert.equal(provider.stats.verificationRequests, startsBefore);
    } finally {
      await redis.start();
    }

    assert.deepEqual(errorLines(logs).slice(errorsBefore), [], 'no error line per refused request');
    const [outage, ...more] = logs.find('session store is unavailable');
    assert.equal(more.length, 0, 'one line for the outage');
    assert.equal(outage?.level, 40);
    assert.match(String(outage?.reason), /^Redis is unavailable/);
    const back = await eventually(() => logs.find('session store is back')[0], 10_000);
    assert.equal((back.refused as { requests?: number }).requests, 4, 'the four refused requests, counted');
  });
});

describe('a proxy whose Redis is unreachable from the start', { skip }, () => {
  const PASSWORD = 'redis-pass-do-not-log-7f3a';
  let provider: RunningProvider;
  let instance: ProxyInstance;
  let logs: LogCapture;

  before(async () => {
    provider = await startProvider();
    logs = captureLogs('debug');
    // A port a redis-server just left: nothing listens there.
    const stopped = await startRedisServer();
    await stopped.close();
    instance = await startInstance({
      provider,
      redisUrl: `redis://obv:${PASSWORD}@127.0.0.1:${stopped.port}/0`,
      // Without the rate limiter, a start reaches the session store itself (the idempotency claim).
      rateLimit: 0,
      logger: logs.logger,
    });
  });

  after(async () => {
    await instance?.kill();
    await provider?.close();
  });

  it('answers 503 with Retry-After to starts, reads and notifications', async () => {
    const startsBefore = provider.stats.verificationRequests;
    // No link session can be made without Redis: a well-formed token the page might hold.
    await assertStoreUnavailable(
      await postVerification(instance, { 'idempotency-key': `start-${randomId()}` }, `lt_${'A'.repeat(32)}`),
      'POST /verifications',
    );
    assert.equal(provider.stats.verificationRequests, startsBefore, 'nothing was started upstream');
    await assertStoreUnavailable(await lookupSession(`${instance.url}/obv`, randomId()), 'POST /sessions/lookup');
    const notification = await postNotification(`${instance.url}/obv/notifications/${randomId()}`, successPayload(), {
      secret: DEFAULT_WEBHOOK_SECRET,
    });
    await assertStoreUnavailable(notification, 'the notification');
    assert.equal(errorLines(logs).length, 0, 'no error line per refused request');
    assert.equal(logs.find('session store is unavailable').length, 1, 'one line for the outage');
  });

  it('never logs the Redis password', () => {
    assert.ok(logs.lines.length > 0);
    assert.deepEqual(
      logs.lines.filter((line) => line.includes(PASSWORD)),
      [],
    );
  });
});
