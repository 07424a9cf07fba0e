// A merchant's backend reconciles its events: each listed event says where its delivery stands, the list
// is filtered to what is not delivered (in the order recorded, so the catch-up misses nothing whatever
// order deliveries happened in), an event handled from the list is acknowledged so it is pushed no more,
// and one can be redelivered. Told as the outage (an endpoint refusing one event type) and as the
// attacker (no key, forged ids, bad queries).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createLogger, createStorage, ProblemError, type ListedEvent } from '../../../proxy/index.ts';
import { startProxyPair, TEST_MERCHANT_API_KEY, PURCHASE, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { EVENTS_SECRET, startMerchantEndpoint, type MerchantEndpoint } from '../../helpers/merchant-endpoint.ts';
import { signInAtBank } from '../redis/cluster.ts';
import { REDELIVERIES_PER_EVENT } from '../../../proxy/config/limits.ts';

const AUTH = { authorization: `Bearer ${TEST_MERCHANT_API_KEY}` };
/** Retries every 100 ms, except a 2 s pause after the third failure: a window in which no attempt is under way. */
const TIMINGS = {
  retryDelaysMs: [100, 100, 2_000, 100, 100, 100, 100],
  attemptTimeoutMs: 1_000,
  pollIntervalMs: 25,
  leaseMs: 5_000,
  sessionCheckDelayMs: 20,
};

async function call(pair: ProxyPair, method: 'GET' | 'POST', path: string, headers: Record<string, string> = AUTH) {
  const response = await fetch(`${pair.baseUrl}${path}`, { method, headers });
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    body: (await response.json()) as Record<string, unknown>,
  };
}

async function listed(pair: ProxyPair, query: string): Promise<ListedEvent[]> {
  const answer = await call(pair, 'GET', `/events${query}`);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.events as ListedEvent[];
}

async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('catching up on events whatever the delivery order', () => {
  let endpoint: MerchantEndpoint;
  let pair: ProxyPair;
  before(async () => {
    endpoint = await startMerchantEndpoint();
    // The outage: the merchant's endpoint refuses link.succeeded and accepts payment.succeeded.
    endpoint.answer = ({ event }) => (event?.type === 'link.succeeded' ? 'fail' : 'ok');
    pair = await startProxyPair({
      proxy: { eventsUrl: endpoint.url, eventsSecrets: [EVENTS_SECRET], eventTimings: TIMINGS },
    });
  });
  after(async () => {
    await pair?.close();
    await endpoint?.close();
  });

  const pushes = (eventId: string) => endpoint.deliveries.filter((delivery) => delivery.event?.id === eventId).length;

  test('link.succeeded refused, payment.succeeded accepted: the undelivered list finds the missed event; acknowledged, it is pushed no more', async () => {
    const merchantTransactionId = `order-catch-up-${Date.now()}`;
    const { sessionId, consumerUrl } = await pair.startVerification({ merchantTransactionId });
    await signInAtBank(consumerUrl);
    await pair.provider.notificationsSettled();
    const { linkRef } = (await pair.store.get(sessionId))!.outcome as { linkRef: string };
    const paid = await fetch(`${pair.baseUrl}/transactions`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({
        linkRef,
        merchantUserId: PURCHASE.merchantUserId,
        merchantTransactionId,
        amount: PURCHASE.amount,
        currency: PURCHASE.currency,
      }),
    });
    assert.equal(paid.status, 201);
    const payment = (await endpoint.waitForDistinct(1)).find((event) => event.type === 'payment.succeeded');
    assert.equal(payment?.data.merchantTransactionId, merchantTransactionId, 'the payment event went through');
    const linked = (await listed(pair, '?limit=100')).find(
      (event) => event.type === 'link.succeeded' && event.data.merchantTransactionId === merchantTransactionId,
    )!;
    assert.ok(linked, 'link.succeeded is recorded');

    // The old recipe, "after the last id you handled", starts after the payment and misses the link.
    assert.deepEqual(
      (await listed(pair, `?after=${payment!.id}`)).map((event) => event.id),
      [],
    );

    // The new one: what is not delivered, in the order recorded.
    const undelivered = await listed(pair, '?delivery=undelivered');
    assert.deepEqual(
      undelivered.map((event) => event.id),
      [linked.id],
    );
    const [missed] = undelivered;
    assert.equal(missed!.delivery.state, 'pending');
    assert.ok(missed!.delivery.attempts >= 1);
    assert.equal(missed!.delivery.lastError, 'answered 500');
    assert.match(missed!.delivery.nextAttemptAt ?? '', /^\d{4}-\d\d-\d\dT/);
    const delivered = (await listed(pair, '?limit=100')).find((event) => event.id === payment!.id)!;
    assert.equal(delivered.delivery.state, 'delivered');
    assert.equal(delivered.delivery.acknowledgedBy, 'endpoint');
    assert.equal(delivered.delivery.attempts, 1);
    assert.ok(Date.parse(delivered.delivery.deliveredAt!) <= Date.now());

    // Acknowledge it during the long pause after the third failure: no attempt is under way then.
    await waitFor(
      () =>
        pair.logs
          .find('merchant event delivery failed')
          .filter((line) => line.event === linked.id && line.attempt === 3).length === 1,
      'the third failure',
    );
    const pushedBefore = pushes(linked.id);
    assert.equal(pushedBefore, 3);
    const acknowledged = await call(pair, 'POST', `/events/${linked.id}/ack`);
    assert.equal(acknowledged.status, 200);
    const ackDelivery = (acknowledged.body as unknown as ListedEvent).delivery;
    assert.deepEqual(
      [ackDelivery.state, ackDelivery.acknowledgedBy, ackDelivery.attempts, ackDelivery.lastError],
      ['delivered', 'api', 3, 'answered 500'],
    );
    assert.equal(acknowledged.body.id, linked.id);
    // Acknowledging again answers the same.
    assert.deepEqual((await call(pair, 'POST', `/events/${linked.id}/ack`)).body, acknowledged.body);
    // Past the pause and four more retry steps: without the acknowledgement it would have been pushed again.
    await sleep(2_600);
    assert.equal(pushes(linked.id), pushedBefore, 'no push after the acknowledgement');
    assert.deepEqual(await listed(pair, '?delivery=undelivered'), []);
  });

  test('a redelivery sends an event again once, same id; asking twice at once is one attempt', async () => {
    const event = await pair.proxy.events.emit('link.cancelled', {
      merchantTransactionId: `order-again-${Date.now()}`,
    });
    await waitFor(
      () =>
        pushes(event!.id) === 1 && pair.logs.find('merchant event delivered').some((line) => line.event === event!.id),
      'the first delivery',
    );
    const asked = await call(pair, 'POST', `/events/${event!.id}/redeliver`);
    assert.equal(asked.status, 202);
    assert.deepEqual((asked.body as unknown as ListedEvent).delivery.state, 'pending');
    await waitFor(() => pushes(event!.id) === 2, 'the redelivery');
    const redelivered = endpoint.deliveries.filter((delivery) => delivery.event?.id === event!.id).at(-1)!;
    assert.equal(redelivered.headers['webhook-id'], event!.id, 'the same id: the handler de-duplicates it');
    assert.equal(redelivered.body, JSON.stringify(event), 'the same body');
    await waitFor(
      async () =>
        (await pair.proxy.listEvents({ limit: 100 })).events.find((e) => e.id === event!.id)?.delivery.state ===
        'delivered',
      'delivered again',
    );

    // In process, twice at once: one more attempt, not two.
    const [first, second] = await Promise.all([
      pair.proxy.redeliverEvent(event!.id),
      pair.proxy.redeliverEvent(event!.id),
    ]);
    assert.deepEqual(first.delivery, second.delivery);
    await waitFor(() => pushes(event!.id) === 3, 'the third delivery');
    await sleep(400);
    assert.equal(pushes(event!.id), 3);
    const after = (await pair.proxy.listEvents({ limit: 100 })).events.find((e) => e.id === event!.id)!;
    assert.deepEqual(
      [after.delivery.state, after.delivery.acknowledgedBy, after.delivery.attempts],
      ['delivered', 'endpoint', 1],
    );
  });

  test('redeliveries are limited per event: 100 asks make at most REDELIVERIES_PER_EVENT more deliveries, the rest 429 with Retry-After', async () => {
    const event = await pair.proxy.events.emit('link.cancelled', {
      merchantTransactionId: `order-flood-${Date.now()}`,
    });
    const other = await pair.proxy.events.emit('link.cancelled', {
      merchantTransactionId: `order-flood-other-${Date.now()}`,
    });
    await waitFor(() => pushes(event!.id) === 1 && pushes(other!.id) === 1, 'the first deliveries');
    const statuses: number[] = [];
    let refused: Response | undefined;
    // Sequential, each after the last delivery settled as far as it will within a moment: the 67 of 100.
    for (let ask = 0; ask < 100; ask += 1) {
      const answer = await fetch(`${pair.baseUrl}/events/${event!.id}/redeliver`, { method: 'POST', headers: AUTH });
      statuses.push(answer.status);
      if (answer.status === 429) refused ??= answer;
      else await answer.arrayBuffer();
      if (answer.status === 202)
        await waitFor(
          () => pushes(event!.id) === 1 + statuses.filter((status) => status === 202).length,
          'the redelivery',
        );
    }
    assert.equal(statuses.filter((status) => status === 202).length, REDELIVERIES_PER_EVENT);
    assert.equal(statuses.filter((status) => status === 429).length, 100 - REDELIVERIES_PER_EVENT);
    assert.equal(refused!.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.ok(Number(refused!.headers.get('retry-after')) > 0, 'Retry-After says when');
    assert.equal(((await refused!.json()) as { type: string }).type, 'urn:obv-link:problem:rate-limited');
    await sleep(300);
    assert.equal(pushes(event!.id), 1 + REDELIVERIES_PER_EVENT, 'no delivery beyond the budget');
    // In process, the same budget; another event keeps its own.
    await assert.rejects(
      pair.proxy.redeliverEvent(event!.id),
      (error: unknown) => error instanceof ProblemError && error.status === 429,
    );
    assert.equal((await pair.proxy.redeliverEvent(other!.id)).id, other!.id);
  });

  test('a given-up event is listed as failed with its last error, and a redelivery brings it once the endpoint is back', async () => {
    endpoint.answer = ({ event }) => (event?.type === 'link.failed' ? 'fail' : 'ok');
    const short = await startProxyPair({
      proxy: {
        eventsUrl: endpoint.url,
        eventsSecrets: [EVENTS_SECRET],
        eventTimings: { ...TIMINGS, retryDelaysMs: [50] },
      },
    });
    try {
      const event = await short.proxy.events.emit('link.failed', {
        merchantTransactionId: 'order-given-up',
        code: 'X',
        message: 'x',
      });
      await waitFor(() => short.logs.find('merchant event not delivered').length === 1, 'given up');
      const [failed] = (await short.proxy.listEvents({ delivery: 'failed' })).events;
      assert.equal(failed?.id, event!.id);
      assert.deepEqual(failed!.delivery, {
        state: 'failed',
        attempts: 2,
        lastAttemptAt: failed!.delivery.lastAttemptAt,
        lastError: 'answered 500',
      });
      assert.deepEqual((await short.proxy.listEvents({ delivery: 'pending' })).events, []);
      endpoint.answer = () => 'ok';
      await short.proxy.redeliverEvent(event!.id);
      await waitFor(
        () =>
          endpoint.events.some(
            (received) =>
              received.id === event!.id && endpoint.deliveries.filter((d) => d.event?.id === event!.id).length === 3,
          ),
        'redelivered',
      );
      await waitFor(
        async () => (await short.proxy.listEvents({ delivery: 'undelivered' })).events.length === 0,
        'nothing undelivered',
      );
    } finally {
      await short.close();
    }
  });

  test('the routes require the merchant API key', async () => {
    const [event] = (await pair.proxy.listEvents({ limit: 1 })).events;
    for (const path of [`/events/${event!.id}/ack`, `/events/${event!.id}/redeliver`]) {
      for (const headers of [
        {} as Record<string, string>,
        { authorization: 'Bearer wrong-key-wrong-key-wrong-key' },
        { authorization: `Basic ${TEST_MERCHANT_API_KEY}` },
      ]) {
        const answer = await call(pair, 'POST', path, headers);
        assert.equal(answer.status, 401, `${path} ${JSON.stringify(headers)}`);
        assert.match(answer.type, /application\/problem\+json/);
      }
    }
    assert.equal((await call(pair, 'GET', '/events?delivery=undelivered', {})).status, 401);
  });

  test('a bad id, an unknown id or a bad filter is a problem naming the field, over HTTP and in process', async () => {
    for (const action of ['ack', 'redeliver']) {
      for (const id of ['nope', `evt_${'A'.repeat(21)}!`, `evt_${'A'.repeat(23)}`]) {
        const answer = await call(pair, 'POST', `/events/${encodeURIComponent(id)}/${action}`);
        assert.equal(answer.status, 400, id);
        assert.match(answer.type, /application\/problem\+json/);
        assert.deepEqual(
          (answer.body.errors as { path: string }[]).map((error) => error.path),
          ['eventId'],
        );
      }
      const unknown = await call(pair, 'POST', `/events/evt_${'A'.repeat(22)}/${action}`);
      assert.equal(unknown.status, 404);
      assert.match(unknown.type, /application\/problem\+json/);
      assert.equal(unknown.body.type, 'urn:obv-link:problem:unknown-event');
      assert.deepEqual(
        (unknown.body.errors as { path: string }[]).map((error) => error.path),
        ['eventId'],
      );
    }
    assert.equal((await call(pair, 'GET', '/events/evt_AAAAAAAAAAAAAAAAAAAAAA/ack')).status, 404, 'GET is not routed');
    for (const [query, field] of [
      ['?delivery=delivered', 'query.delivery'],
      ['?delivery=', 'query.delivery'],
      ['?delivery=pending&delivery=failed', 'query.delivery'],
    ] as const) {
      const answer = await call(pair, 'GET', `/events${query}`);
      assert.equal(answer.status, 400, query);
      assert.ok(
        (answer.body.errors as { path: string }[]).some((error) => error.path === field),
        `${query}: ${JSON.stringify(answer.body.errors)}`,
      );
    }
    const refused = (path: string, status: number) => (error: unknown) =>
      error instanceof ProblemError && error.status === status && error.errors?.[0]?.path === path;
    await assert.rejects(pair.proxy.acknowledgeEvent('nope'), refused('eventId', 400));
    await assert.rejects(pair.proxy.redeliverEvent(`evt_${'A'.repeat(22)}`), refused('eventId', 404));
    await assert.rejects(pair.proxy.listEvents({ delivery: 'delivered' as never }), refused('delivery', 400));
  });
});

describe('event delivery state, as the outage and the attacker see it', () => {
  test('with events off the routes are absent and the in-process calls say why', async () => {
    const pair = await startProxyPair();
    try {
      const id = `evt_${'A'.repeat(22)}`;
      for (const [method, path] of [
        ['GET', '/events?delivery=undelivered'],
        ['POST', `/events/${id}/ack`],
        ['POST', `/events/${id}/redeliver`],
      ] as const) {
        assert.equal((await call(pair, method, path)).status, 404, path);
      }
      for (const run of [
        () => pair.proxy.listEvents({ delivery: 'undelivered' }),
        () => pair.proxy.acknowledgeEvent(id),
        () => pair.proxy.redeliverEvent(id),
      ]) {
        await assert.rejects(
          run(),
          (error: unknown) => error instanceof TypeError && /OBV_EVENTS_URL/.test(error.message),
        );
      }
    } finally {
      await pair.close();
    }
  });

  test('the last error of an endpoint that cannot be reached names the failure, never the URL (its query may carry a token)', async () => {
    const closed = await startMerchantEndpoint();
    const url = `${closed.url}?token=very-secret-query-token`;
    await closed.close();
    const pair = await startProxyPair({
      proxy: { eventsUrl: url, eventsSecrets: [EVENTS_SECRET], eventTimings: { ...TIMINGS, retryDelaysMs: [60_000] } },
    });
    try {
      const event = await pair.proxy.events.emit('link.cancelled', {});
      const listedEvent = await waitFor(async () => {
        const found = (await pair.proxy.listEvents({ delivery: 'pending' })).events.find((e) => e.id === event!.id);
        return found?.delivery.lastError ? found : undefined;
      }, 'the first failure');
      assert.equal(listedEvent.delivery.lastError, 'connection failed (ECONNREFUSED)');
      assert.equal(listedEvent.delivery.attempts, 1);
      // The next attempt is a minute away; it is listed so.
      assert.ok(Date.parse(listedEvent.delivery.nextAttemptAt!) > Date.now() + 50_000);
      assert.equal(JSON.stringify(await call(pair, 'GET', '/events')).includes('very-secret'), false);
      assert.equal(
        pair.logs.lines.some((line) => line.includes('very-secret')),
        false,
      );
    } finally {
      await pair.close();
    }
  });

  test('SQLite: an acknowledgement answered survives a restart; the restarted proxy pushes the event no more', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'obv-events-ack-'));
    const endpoint = await startMerchantEndpoint();
    endpoint.answer = () => 'fail';
    const options = {
      eventsUrl: endpoint.url,
      eventsSecrets: [EVENTS_SECRET],
      eventTimings: { ...TIMINGS, retryDelaysMs: [300, 300, 300, 300, 300, 300] },
    };
    /** A proxy on the data directory's SQLite file (the harness keeps sessions in memory; the outbox is the file's). */
    const start = async () => {
      const backend = createStorage({ kind: 'sqlite', dataDir, logger: createLogger('silent') });
      const pair = await startProxyPair({ proxy: { ...options, backend } });
      const closePair = pair.close.bind(pair);
      return Object.assign(pair, {
        close: async () => {
          await closePair();
          await backend.close();
        },
      });
    };
    try {
      const first = await start();
      let eventId: string;
      try {
        eventId = (await first.proxy.events.emit('link.cancelled', { merchantTransactionId: 'order-sqlite' }))!.id;
        await waitFor(() => endpoint.deliveries.length >= 1, 'a first attempt');
        const [undelivered] = (await first.proxy.listEvents({ delivery: 'undelivered' })).events;
        assert.equal(undelivered?.id, eventId);
        assert.equal((await call(first, 'POST', `/events/${eventId}/ack`)).status, 200);
      } finally {
        await first.close();
      }
      const pushed = endpoint.deliveries.length;
      const second = await start();
      try {
        const [event] = (await second.proxy.listEvents({})).events;
        assert.deepEqual(
          [event?.id, event?.delivery.state, event?.delivery.acknowledgedBy],
          [eventId, 'delivered', 'api'],
        );
        await sleep(1_000);
        assert.equal(endpoint.deliveries.length, pushed, 'no push after the restart');
      } finally {
        await second.close();
      }
    } finally {
      await endpoint.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
