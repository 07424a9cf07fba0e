// Merchant events on one instance (memory outbox): every way a session ends becomes one signed event
// at the merchant's URL, with no browser needed; an endpoint that is down gets every event once it is
// back; GET /events lists what was missed; signatures verify with the standardwebhooks library under
// every rotated secret, and a tampered body does not.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { configFromEnv, type ConfigError, type MerchantEvent } from '../../../proxy/index.ts';
import { MemoryEventOutbox } from '../../../proxy/storage/memory/outbox.ts';
import { createEventSigner } from '../../../proxy/events/signing.ts';
import { startProxyPair, TEST_MERCHANT_API_KEY, PURCHASE, type ProxyPair } from '../../helpers/proxy-harness.ts';
import {
  EVENTS_SECRET,
  ROTATED_EVENTS_SECRET,
  startMerchantEndpoint,
  type MerchantEndpoint,
} from '../../helpers/merchant-endpoint.ts';
import { failurePayload, postNotification, successPayload } from '../../helpers/webhooks.ts';
import { signInAtBank } from '../redis/cluster.ts';
import { describeOutboxContract } from '../../helpers/outbox-contract.ts';
import { cancelSession } from '../../helpers/session-requests.ts';

describeOutboxContract('MemoryEventOutbox', () => new MemoryEventOutbox());

/** Fast retries: the schedule's shape, in milliseconds instead of hours. */
const FAST = {
  retryDelaysMs: [50, 100, 150, 200, 250, 300],
  attemptTimeoutMs: 500,
  pollIntervalMs: 25,
  leaseMs: 2_000,
  sessionCheckDelayMs: 20,
};

async function eventsPair(endpoint: MerchantEndpoint, overrides: Record<string, unknown> = {}): Promise<ProxyPair> {
  return startProxyPair({
    proxy: {
      eventsUrl: endpoint.url,
      eventsSecrets: [ROTATED_EVENTS_SECRET, EVENTS_SECRET],
      eventTimings: FAST,
      ...overrides,
    },
  });
}

async function listEvents(
  pair: ProxyPair,
  query = '',
  key = TEST_MERCHANT_API_KEY,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${pair.baseUrl}/events${query}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('merchant events', () => {
  let endpoint: MerchantEndpoint;
  let pair: ProxyPair;

  before(async () => {
    endpoint = await startMerchantEndpoint();
    pair = await eventsPair(endpoint);
  });
  after(async () => {
    await pair?.close();
    await endpoint?.close();
  });

  test('a checkout closed before the bank step ends still produces link.succeeded at the merchant, from the provider alone', async () => {
    const before = endpoint.events.length;
    const { sessionId, consumerUrl } = await pair.startVerification();
    // No socket, no polling, no return page: the shopper is gone; only the provider's notification arrives.
    await signInAtBank(consumerUrl);
    const [event] = (await endpoint.waitForDistinct(before + 1)).slice(before);
    assert.equal(event?.type, 'link.succeeded');
    const stored = await pair.store.get(sessionId);
    assert.equal(stored?.outcome?.status, 'success');
    const { linkRef, sealedAccountToken } = stored!.outcome as { linkRef: string; sealedAccountToken: string };
    assert.deepEqual(event!.data, {
      merchantUserId: PURCHASE.merchantUserId,
      merchantTransactionId: PURCHASE.merchantTransactionId,
      amount: PURCHASE.amount,
      currency: PURCHASE.currency,
      linkRef,
      accountLabel: stored!.outcome!.status === 'success' ? stored!.outcome!.accountLabel : '',
      fiName: 'Sandbox Federal Bank',
      fiAccountType: 'CHECKING',
    });
    assert.match(event!.id, /^evt_[A-Za-z0-9_-]{22}$/);
    // Nothing secret rides along: no token (the provider's, or sealed), no session id.
    const raw = endpoint.deliveries.at(-1)!.body;
    const accountTokens = [...pair.provider.state.accounts.keys()];
    assert.ok(accountTokens.length > 0);
    for (const token of [...accountTokens, sealedAccountToken, sessionId])
      assert.equal(raw.includes(token), false, token.slice(0, 6));
  });

  test('the provider repeating its notification does not make a second event for the session', async () => {
    const { sessionId } = await pair.startVerification();
    const url = await pair.notificationUrl(sessionId);
    const payload = successPayload();
    const before = new Set(endpoint.events.map((event) => event.id)).size;
    for (let i = 0; i < 3; i++)
      assert.equal((await postNotification(url, payload, { id: `msg_repeat_${Date.now()}` })).status, 200);
    await endpoint.waitForDistinct(before + 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(new Set(endpoint.events.map((event) => event.id)).size, before + 1);
  });

  test('a failure and a cancel each end their session with their own event', async () => {
    const seen = new Set(endpoint.events.map((event) => event.id)).size;
    const failed = await pair.startVerification();
    assert.equal(
      (
        await postNotification(
          await pair.notificationUrl(failed.sessionId),
          failurePayload('ACCOUNT_NOT_VERIFIED', 'Not verified.'),
        )
      ).status,
      200,
    );
    const cancelled = await pair.startVerification();
    const cancel = await cancelSession(pair.baseUrl, cancelled.sessionId, { origin: pair.origin });
    assert.equal(cancel.status, 200);
    const events = (await endpoint.waitForDistinct(seen + 2)).slice(seen);
    const byType = new Map(events.map((event) => [event.type, event]));
    assert.deepEqual(byType.get('link.failed')?.data, {
      ...order(),
      code: 'ACCOUNT_NOT_VERIFIED',
      message: 'Not verified.',
    });
    assert.deepEqual(byType.get('link.cancelled')?.data, order());
  });

  test('a session whose time passes with no outcome ends with link.expired', async () => {
    const shortEndpoint = await startMerchantEndpoint();
    const short = await eventsPair(shortEndpoint, { sessionTtlMs: 300 });
    try {
      const { sessionId } = await short.startVerification();
      const [event] = await shortEndpoint.waitForDistinct(1);
      assert.equal(event?.type, 'link.expired');
      const record = await short.store.get(sessionId);
      assert.deepEqual(event?.data, { ...order(), expiredAt: new Date(record!.expiresAt).toISOString() });
      // A notification after the expiry is not stored, so no second event follows.
      assert.equal((await postNotification(await short.notificationUrl(sessionId), successPayload())).status, 200);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(shortEndpoint.events.length, 1);
    } finally {
      await short.close();
      await shortEndpoint.close();
    }
  });

  test('a success held for the bank step is told only once the starting browser confirms it, as link.failed when it was completed elsewhere, and as link.expired if it is never decided', async () => {
    const boundEndpoint = await startMerchantEndpoint();
    const bound = await eventsPair(boundEndpoint, { bindBankStep: true, sessionTtlMs: 1_500, bankStepGraceMs: 100 });
    try {
      const start = async () => {
        const response = await fetch(`${bound.baseUrl}/verifications`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: bound.origin },
          body: JSON.stringify({ linkToken: await bound.createLinkSession() }),
        });
        assert.equal(response.status, 201);
        const { sessionId } = (await response.json()) as { sessionId: string };
        return { sessionId, cookie: (response.headers.get('set-cookie') ?? '').split(';')[0]! };
      };
      const abandoned = await start();
      const confirmed = await start();
      const elsewhere = await start();
      // Stored and acknowledged, and held: nobody has come back yet.
      for (const { sessionId } of [abandoned, confirmed, elsewhere]) {
        assert.equal((await postNotification(await bound.notificationUrl(sessionId), successPayload())).status, 200);
      }
      // A browser without the binding comes back for one; the starting browser for another, after the grace.
      assert.equal(
        (await fetch(await bound.returnUrl(elsewhere.sessionId), { headers: { accept: 'text/html' } })).status,
        403,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const back = await fetch(await bound.returnUrl(confirmed.sessionId), {
        headers: { cookie: confirmed.cookie, accept: 'text/html' },
      });
      assert.equal(back.status, 200);
      const events = await boundEndpoint.waitForDistinct(3);
      const stored = await bound.store.get(confirmed.sessionId);
      assert.deepEqual(events.map((event) => [event.type, event.data.linkRef ?? event.data.code]).sort(), [
        ['link.expired', undefined],
        ['link.failed', 'BANK_STEP_ELSEWHERE'],
        ['link.succeeded', (stored!.outcome as { linkRef: string }).linkRef],
      ]);
      for (const { sessionId } of [abandoned, elsewhere]) {
        const record = await bound.store.get(sessionId);
        assert.ok(
          !boundEndpoint.deliveries.some((d) => d.body.includes((record!.outcome as { linkRef: string }).linkRef)),
        );
      }
    } finally {
      await bound.close();
      await boundEndpoint.close();
    }
  });

  test('a payment is told as payment.succeeded once per order, even when its request is retried; a refused one as payment.failed', async () => {
    const merchantTransactionId = `order-events-${Date.now()}`;
    const { sessionId, consumerUrl } = await pair.startVerification({ merchantTransactionId });
    await signInAtBank(consumerUrl);
    await pair.provider.notificationsSettled();
    const { linkRef } = (await pair.store.get(sessionId))!.outcome as { linkRef: string };
    const pay = () =>
      fetch(`${pair.baseUrl}/transactions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${TEST_MERCHANT_API_KEY}`,
          'idempotency-key': `pay-${merchantTransactionId}`,
        },
        body: JSON.stringify({
          linkRef,
          merchantUserId: PURCHASE.merchantUserId,
          merchantTransactionId,
          amount: PURCHASE.amount,
          currency: PURCHASE.currency,
        }),
      });
    const paid = (await (await pay()).json()) as { transactionId: string };
    assert.equal((await pay()).headers.get('idempotent-replayed'), 'true');
    /** The distinct events of `type` for `order` the merchant received (waiting up to 10 s for the first). */
    const told = async (type: string, order: string) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const found = endpoint.events.filter(
          (event) => event.type === type && event.data.merchantTransactionId === order,
        );
        if (found.length > 0 || Date.now() > deadline)
          return [...new Map(found.map((event) => [event.id, event])).values()];
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };
    const succeeded = await told('payment.succeeded', merchantTransactionId);
    assert.equal(succeeded.length, 1, 'one event for the order, whatever the retries');
    // The event names the payment (GET /transactions/{id} gives the same paymentId), not only the order.
    const record = (await (
      await fetch(`${pair.baseUrl}/transactions/${merchantTransactionId}`, {
        headers: { authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
      })
    ).json()) as { paymentId: string };
    assert.match(record.paymentId, /^pay_/);
    assert.deepEqual(succeeded[0]!.data, {
      merchantUserId: PURCHASE.merchantUserId,
      merchantTransactionId,
      amount: PURCHASE.amount,
      currency: PURCHASE.currency,
      linkRef,
      paymentId: record.paymentId,
      transactionId: paid.transactionId,
      transactionStatus: 'APPROVED',
    });

    const refusedOrder = `order-refused-${Date.now()}`;
    const second = await pair.startVerification({ merchantTransactionId: refusedOrder });
    await signInAtBank(second.consumerUrl);
    await pair.provider.notificationsSettled();
    const refusedRef = ((await pair.store.get(second.sessionId))!.outcome as { linkRef: string }).linkRef;
    pair.provider.state.accounts.clear();
    const refused = await fetch(`${pair.baseUrl}/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
      body: JSON.stringify({
        linkRef: refusedRef,
        merchantUserId: PURCHASE.merchantUserId,
        merchantTransactionId: refusedOrder,
        amount: PURCHASE.amount,
        currency: PURCHASE.currency,
      }),
    });
    assert.equal(refused.status, 422);
    const [failed] = await told('payment.failed', refusedOrder);
    assert.equal(failed?.data.code, 'PAYMENT_REFUSED');
    assert.equal(JSON.stringify(failed?.data).includes('accountToken'), false);
    // The refused payment charged nothing: the order is paid again, and its success is a new event,
    // never one sharing the failure's id (each payment's events are named by that payment).
    const again = await pair.startVerification({ merchantTransactionId: refusedOrder });
    await signInAtBank(again.consumerUrl);
    await pair.provider.notificationsSettled();
    const againRef = ((await pair.store.get(again.sessionId))!.outcome as { linkRef: string }).linkRef;
    const paidAgain = await fetch(`${pair.baseUrl}/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
      body: JSON.stringify({
        linkRef: againRef,
        merchantUserId: PURCHASE.merchantUserId,
        merchantTransactionId: refusedOrder,
        amount: PURCHASE.amount,
        currency: PURCHASE.currency,
      }),
    });
    assert.equal(paidAgain.status, 201);
    const [succeededLater] = await told('payment.succeeded', refusedOrder);
    assert.ok(succeededLater);
    assert.notEqual(succeededLater.id, failed!.id);
    assert.notEqual(succeededLater.data.paymentId, failed!.data.paymentId);
  });

  test('every signature verifies with the standardwebhooks library under each rotated secret; a tampered body does not', async () => {
    if (endpoint.deliveries.length === 0) await pair.proxy.events.emit('link.cancelled', order());
    const delivery = endpoint.deliveries.find((d) => d.event)!;
    assert.equal(delivery.headers['webhook-signature']?.split(' ').length, 2);
    assert.equal(delivery.headers['webhook-id'], delivery.event!.id);
    for (const secret of [EVENTS_SECRET, ROTATED_EVENTS_SECRET]) {
      assert.deepEqual(new Webhook(secret).verify(delivery.body, delivery.headers), JSON.parse(delivery.body));
    }
    const tampered = delivery.body.replace('"data":{', '"data":{"amount":"0.01",');
    assert.notEqual(tampered, delivery.body);
    assert.throws(() => new Webhook(EVENTS_SECRET).verify(tampered, delivery.headers), /No matching signature/);
    assert.throws(
      () =>
        new Webhook(`whsec_${Buffer.from('another-secret-entirely-000').toString('base64')}`).verify(
          delivery.body,
          delivery.headers,
        ),
      /No matching signature/,
    );
    const { 'webhook-signature': _dropped, ...unsigned } = delivery.headers;
    assert.throws(() => new Webhook(EVENTS_SECRET).verify(delivery.body, unsigned), /Missing required headers/);
  });

  test('emit refuses data a type does not list, so a token cannot ride along', async () => {
    await assert.rejects(
      pair.proxy.events.emit('link.cancelled', { ...order(), accountToken: 'tok_secret' } as never),
      /accountToken/,
    );
  });

  test('GET /events lists the retained events oldest first, pages with after and limit, behind the API key', async () => {
    assert.equal((await listEvents(pair, '', 'wrong-key-wrong-key-wrong-key')).status, 401);
    const all = await listEvents(pair, '?limit=100');
    assert.equal(all.status, 200);
    const events = all.body.events as MerchantEvent[];
    assert.ok(events.length >= 4);
    assert.equal(all.body.hasMore, false);
    const times = events.map((event) => event.createdAt);
    assert.deepEqual([...times].sort(), times);
    // Every event the merchant received is listed, and the list has nothing it never got.
    assert.deepEqual(new Set(events.map((event) => event.id)), new Set(endpoint.events.map((event) => event.id)));
    const page = await listEvents(pair, `?after=${events[0]!.id}&limit=2`);
    assert.deepEqual(
      (page.body.events as MerchantEvent[]).map((event) => event.id),
      events.slice(1, 3).map((event) => event.id),
    );
    assert.equal(page.body.hasMore, events.length > 3);
  });

  test('GET /events refuses a bad query with a problem naming the field', async () => {
    for (const [query, field] of [
      ['?limit=0', 'query.limit'],
      ['?limit=101', 'query.limit'],
      ['?limit=ten', 'query.limit'],
      ['?after=nope', 'query.after'],
      [`?after=evt_${'A'.repeat(22)}`, 'query.after'],
      ['?since=1', 'query.since'],
      ['?after=a&after=b', 'query.after'],
    ] as const) {
      const response = await fetch(`${pair.baseUrl}/events${query}`, {
        headers: { authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
      });
      assert.equal(response.status, 400, query);
      assert.match(response.headers.get('content-type') ?? '', /application\/problem\+json/);
      const body = (await response.json()) as { errors: { path: string }[] };
      assert.ok(
        body.errors.some((error) => error.path === field),
        `${query}: ${JSON.stringify(body.errors)}`,
      );
    }
  });
});

function order() {
  const { merchantUserId, merchantTransactionId, amount, currency } = PURCHASE;
  return { merchantUserId, merchantTransactionId, amount, currency };
}

describe('merchant events when the merchant endpoint fails', () => {
  test('an endpoint down for a while gets every event once it is back, and each failure is logged once per event per retry', async () => {
    const endpoint = await startMerchantEndpoint();
    const pair = await eventsPair(endpoint, {
      eventTimings: { ...FAST, retryDelaysMs: [100, 200, 300, 400, 500, 600, 700, 800] },
    });
    try {
      await endpoint.down();
      const emitted = [];
      for (let i = 0; i < 5; i++)
        emitted.push(
          await pair.proxy.events.emit('payment.succeeded', {
            ...order(),
            paymentId: `pay-${i}`,
            transactionId: `t-${i}`,
            transactionStatus: 'SUCCESS',
          }),
        );
      // Let a few attempts fail, then come back.
      await waitFor(() => pair.logs.find('merchant event delivery failed').length >= 10);
      const pendingText =
        await await pair.proxy.metrics.registry.getSingleMetricAsString('obv_merchant_events_pending');
      assert.match(pendingText, /obv_merchant_events_pending 5/);
      const oldest = await pair.proxy.metrics.registry.getSingleMetricAsString(
        'obv_merchant_events_oldest_pending_seconds',
      );
      assert.ok(Number(/obv_merchant_events_oldest_pending_seconds ([\d.e-]+)/.exec(oldest)?.[1]) > 0, oldest);
      await endpoint.up();
      const received = await endpoint.waitForDistinct(5);
      assert.deepEqual(new Set(received.map((event) => event.id)), new Set(emitted.map((event) => event!.id)));
      // The merchant has them; the proxy settles each once the 204 is back.
      await waitFor(async () =>
        /obv_merchant_events_pending 0/.test(
          await pair.proxy.metrics.registry.getSingleMetricAsString('obv_merchant_events_pending'),
        ),
      );

      const failures = pair.logs.find('merchant event delivery failed');
      // One line per failed attempt, each naming its event, step and reason; never twice the same step.
      const steps = failures.map((line) => `${String(line.event)}#${String(line.attempt)}`);
      assert.equal(new Set(steps).size, steps.length);
      for (const line of failures) {
        assert.match(String(line.reason), /^connection failed \(ECONNREFUSED\)$/);
        assert.equal(typeof line.retryInSeconds, 'number');
      }
      const metrics = await pair.proxy.metrics.registry.metrics();
      assert.match(
        metrics,
        new RegExp(`obv_merchant_event_attempts_failed_total\\{reason="network"\\} ${failures.length}\\b`),
      );
      assert.match(metrics, /obv_merchant_events_sent_total\{type="payment.succeeded"\} 5/);
    } finally {
      await pair.close();
      await endpoint.close();
    }
  });

  test('an answer that is not 2xx or comes too late is retried; after the last attempt the event is marked failed and stays listed', async () => {
    const endpoint = await startMerchantEndpoint();
    const pair = await eventsPair(endpoint, {
      eventTimings: { ...FAST, attemptTimeoutMs: 150, retryDelaysMs: [30, 30] },
    });
    try {
      let calls = 0;
      endpoint.answer = () => (++calls === 1 ? { delayMs: 1_000 } : 'fail');
      const event = await pair.proxy.events.emit('link.cancelled', order());
      await waitFor(() => pair.logs.find('merchant event not delivered').length === 1);
      assert.equal(endpoint.deliveries.length, 3);
      const reasons = pair.logs.find('merchant event delivery failed').map((line) => line.reason);
      assert.deepEqual(reasons, ['no answer within 150 ms', 'answered 500']);
      assert.equal(pair.logs.find('merchant event not delivered')[0]?.reason, 'answered 500');
      const metrics = await pair.proxy.metrics.registry.metrics();
      assert.match(metrics, /obv_merchant_events_failed_total\{type="link.cancelled"\} 1/);
      const listed = await listEvents(pair);
      assert.deepEqual(
        (listed.body.events as MerchantEvent[]).map((e) => e.id),
        [event!.id],
      );
    } finally {
      await pair.close();
      await endpoint.close();
    }
  });
});

describe('merchant events configuration', () => {
  const PRODUCTION = {
    OBV_BASE_URL: 'https://api.provider.example',
    OBV_CLIENT_ID: 'client-live',
    OBV_CLIENT_SECRET: 'secret-live-0123456789',
    OBV_PUBLIC_URL: 'https://shop.example',
    OBV_WEBHOOK_SECRET: 'whsec_3q2+7w8X0f9mS1c4QeV7aB2nL5tY8uK1pZ6rD3gH0jE=',
    OBV_MERCHANT_ID: 'm-live',
    OBV_SEALING_KEYS: 'k1:dux0ek/rqEzDBV9T2T/zc3W7us82yMS7iNmiqbwxckk=',
  };
  const settings = (env: Record<string, string>) => {
    try {
      configFromEnv(env);
      return [];
    } catch (error) {
      return (error as ConfigError).issues.map((issue) => `${issue.setting}: ${issue.message}`);
    }
  };

  test('events are off without a URL, and a URL needs secrets', () => {
    assert.deepEqual(settings(PRODUCTION), []);
    assert.deepEqual(settings({ ...PRODUCTION, OBV_EVENTS_URL: 'https://shop.example/events' }), [
      'OBV_EVENTS_SECRETS: is required with an events URL (the events are signed with it)',
    ]);
    const config = configFromEnv({
      ...PRODUCTION,
      OBV_EVENTS_URL: 'https://shop.example/events',
      OBV_EVENTS_SECRETS:
        'whsec_Yk9tR2xQd1N4ZnJ2YjNNa0g4cUxuVzJ6QXBFNmNUMGk=, whsec_N1FwWmM0bkt2UjhzVDJ5TGg2RG0wQnhKM2ZHNXdBOXU=',
    });
    assert.equal(config.eventsSecrets?.length, 2);
    assert.deepEqual(
      settings({
        ...PRODUCTION,
        OBV_EVENTS_URL: 'https://user:pass@shop.example/events',
        OBV_EVENTS_SECRETS: 'whsec_Yk9tR2xQd1N4ZnJ2YjNNa0g4cUxuVzJ6QXBFNmNUMGk=',
      }),
      ['OBV_EVENTS_URL: must not contain user:password@ (your endpoint checks the signature instead)'],
    );
  });

  test("outside sandbox mode the events URL is https and each secret long, unpublished and not the provider's", () => {
    const issues = settings({
      ...PRODUCTION,
      OBV_EVENTS_URL: 'http://shop.example/events',
      OBV_EVENTS_SECRETS: `whsec_c2hvcnQ=,whsec_c2FuZGJveC13ZWJob29rLXNlY3JldC1vYnYtbGluaw==,${PRODUCTION.OBV_WEBHOOK_SECRET},not-a-secret`,
    });
    assert.ok(
      issues.some((line) => line.startsWith('OBV_EVENTS_URL: must use https')),
      issues.join('\n'),
    );
    assert.ok(
      issues.some((line) => line.startsWith('OBV_EVENTS_SECRETS: must be a Standard Webhooks secret')),
      issues.join('\n'),
    );
    const valid = settings({
      ...PRODUCTION,
      OBV_EVENTS_URL: 'http://shop.example/events',
      OBV_EVENTS_SECRETS: `whsec_c2hvcnQ=,whsec_c2FuZGJveC13ZWJob29rLXNlY3JldC1vYnYtbGluaw==,${PRODUCTION.OBV_WEBHOOK_SECRET}`,
    });
    assert.ok(
      valid.includes(
        'OBV_EVENTS_SECRETS: must decode to at least 24 bytes (outside sandbox mode; OBV_SANDBOX=true is for the local sandbox only)',
      ),
      valid.join('\n'),
    );
    assert.ok(
      valid.some((line) => line.startsWith("OBV_EVENTS_SECRETS: is the sandbox's published secret")),
      valid.join('\n'),
    );
    assert.ok(
      valid.some((line) => line.startsWith('OBV_EVENTS_SECRETS: must differ from OBV_WEBHOOK_SECRET')),
      valid.join('\n'),
    );
  });

  test('with events off, emit records nothing and GET /events is not there', async () => {
    const pair = await startProxyPair();
    try {
      assert.equal(pair.proxy.events.enabled, false);
      assert.equal(await pair.proxy.events.emit('link.cancelled', order()), undefined);
      assert.equal((await listEvents(pair)).status, 404);
    } finally {
      await pair.close();
    }
  });

  test('signing puts one v1 signature per secret, in the order configured', () => {
    const sign = createEventSigner([EVENTS_SECRET, ROTATED_EVENTS_SECRET]);
    const headers = sign('evt_AAAAAAAAAAAAAAAAAAAAAA', '{"a":1}', 1_700_000_000_000);
    assert.equal(headers['webhook-timestamp'], '1700000000');
    const [first, second] = headers['webhook-signature'].split(' ');
    assert.equal(
      first,
      new Webhook(EVENTS_SECRET).sign('evt_AAAAAAAAAAAAAAAAAAAAAA', new Date(1_700_000_000_000), '{"a":1}'),
    );
    assert.equal(
      second,
      new Webhook(ROTATED_EVENTS_SECRET).sign('evt_AAAAAAAAAAAAAAAAAAAAAA', new Date(1_700_000_000_000), '{"a":1}'),
    );
  });

  test('a memory outbox lists after an id and forgets delivered events past the retention', async () => {
    const outbox = new MemoryEventOutbox({ retentionMs: 1_000 });
    const event = (id: string) => ({
      id,
      type: 'link.cancelled' as const,
      createdAt: new Date(0).toISOString(),
      data: {},
    });
    await outbox.append(event(`evt_${'a'.repeat(22)}`), 0);
    await outbox.append(event(`evt_${'b'.repeat(22)}`), 500);
    assert.equal(await outbox.append(event(`evt_${'a'.repeat(22)}`), 600), false);
    await outbox.settle(`evt_${'a'.repeat(22)}`, { ok: true }, 600);
    assert.deepEqual(
      (await outbox.list({ after: `evt_${'a'.repeat(22)}`, limit: 10 }, 900))?.events.map((e) => e.event.id),
      [`evt_${'b'.repeat(22)}`],
    );
    assert.equal(await outbox.list({ after: `evt_${'a'.repeat(22)}`, limit: 10 }, 1_100), undefined);
    // The pending one stays past the retention: it is still being delivered.
    assert.deepEqual(
      (await outbox.list({ limit: 10 }, 5_000))?.events.map((e) => e.event.id),
      [`evt_${'b'.repeat(22)}`],
    );
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
