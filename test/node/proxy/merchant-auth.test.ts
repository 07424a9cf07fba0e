// The failed API-key limit on the server-only routes: only wrong keys are counted, so the merchant's own
// requests are never refused by it — not while many run at once against a slow provider, and not after
// someone sharing the merchant's address has sent wrong keys. In memory and with Redis across instances.
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import {
  PURCHASE,
  startProxy,
  startProxyPair,
  TEST_MERCHANT_API_KEY,
  type ProxyPair,
  type RunningProxy,
} from '../../helpers/proxy-harness.ts';
import { redisSkipReason, startRedisServer } from '../../helpers/redis-server.ts';
import { createLogger, createStorage } from '../../../proxy/index.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

const PROVIDER_LATENCY_MS = 300;
const LIMIT = 3;

/** Links `count` accounts, one order each, and returns the payments that redeem them. */
async function linkedPayments(pair: ProxyPair, count: number, tag: string): Promise<Record<string, string>[]> {
  const payments = [];
  for (let i = 0; i < count; i++) {
    const merchantTransactionId = `order-${tag}-${i}`;
    const { sessionId, consumerUrl } = await pair.startVerification({ merchantTransactionId });
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const session = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { outcome: { linkRef: string } };
    payments.push({
      linkRef: session.outcome.linkRef,
      merchantUserId: PURCHASE.merchantUserId,
      merchantTransactionId,
      amount: PURCHASE.amount,
      currency: PURCHASE.currency,
    });
  }
  return payments;
}

async function submit(proxy: Pick<RunningProxy, 'baseUrl'>, body: unknown, key: string): Promise<number> {
  const response = await fetch(`${proxy.baseUrl}/transactions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

const wrongKey = (i: number) => `wrong-key-${i}-padding-padding-padding`;

/** The two behaviours, against `primary` and (Redis) a second instance sharing its backend. */
function limitBehaviour(
  setUp: (t: TestContext) => Promise<{ primary: ProxyPair; other: Pick<RunningProxy, 'baseUrl' | 'logs'> }>,
) {
  test('concurrent payments with the right key all pass while the provider is slow', async (t) => {
    const { primary } = await setUp(t);
    const payments = await linkedPayments(primary, LIMIT + 5, 'concurrent');
    primary.provider.faults.transactionDelayMs = PROVIDER_LATENCY_MS;
    const statuses = await Promise.all(payments.map((payment) => submit(primary, payment, TEST_MERCHANT_API_KEY)));
    assert.deepEqual(
      statuses,
      payments.map(() => 201),
    );
  });

  test('wrong keys from an address are answered 429 past the limit, and the right key from it still pays', async (t) => {
    const { primary, other } = await setUp(t);
    const [payment] = await linkedPayments(primary, 1, 'locked');
    const statuses = [];
    // Alternating instances: with a shared backend the budget is one for all of them.
    for (let i = 0; i < LIMIT + 1; i++) statuses.push(await submit(i % 2 ? other : primary, payment, wrongKey(i)));
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    assert.equal(await submit(primary, payment, TEST_MERCHANT_API_KEY), 201);
    assert.equal(await submit(other, payment, wrongKey(99)), 429, 'the right key did not reset the count');
    const warnings = [...new Set([primary, other])].reduce(
      (sum, proxy) => sum + proxy.logs.find('failed API-key limit').length,
      0,
    );
    assert.equal(warnings, 1, 'the lockout is reported once');
  });
}

describe('failed API-key limit, in memory', () => {
  limitBehaviour(async (t) => {
    const primary = await startProxyPair({ proxy: { authFailureLimit: LIMIT } });
    t.after(() => primary.close());
    return { primary, other: primary };
  });
});

describe('failed API-key limit, in Redis across two instances', { skip: redisSkipReason() }, () => {
  limitBehaviour(async (t) => {
    const redis = await startRedisServer();
    t.after(() => redis.stop());
    const backend = () => {
      const made = createStorage({
        kind: 'redis',
        redisUrl: redis.url,
        redisPrefix: 'auth-test:',
        logger: createLogger('silent'),
      });
      t.after(() => made.close());
      return made;
    };
    const primary = await startProxyPair({ proxy: { authFailureLimit: LIMIT, backend: backend() } });
    t.after(() => primary.close());
    const other = await startProxy({
      providerUrl: primary.provider.url,
      proxy: { authFailureLimit: LIMIT, backend: backend() },
    });
    t.after(() => other.close());
    return { primary, other };
  });
});
