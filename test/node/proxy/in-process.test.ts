// A Node app that mounts the proxy calls it in process: pay, read a link, read a payment, list events and
// verify an event's signature, with the same rules and errors as the HTTP routes, and no HTTP call to
// itself (the calls work with no merchant API key at all).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { PURCHASE, startProxyPair, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { EVENTS_SECRET, startMerchantEndpoint, type MerchantEndpoint } from '../../helpers/merchant-endpoint.ts';
import { lookupSession } from '../../helpers/session-requests.ts';
import { EVENT_TYPES, MerchantEventSchema, ProblemError, WebhookSignatureError } from '../../../proxy/index.ts';
import { spawn } from 'node:child_process';

describe('in-process calls on the object createObvProxy returns', () => {
  let pair: ProxyPair;
  let endpoint: MerchantEndpoint;
  before(async () => {
    endpoint = await startMerchantEndpoint();
    // No merchant API key: the HTTP routes for the merchant's server are absent, the in-process calls are not.
    pair = await startProxyPair({
      proxy: {
        merchantApiKey: undefined,
        eventsUrl: endpoint.url,
        eventsSecrets: [EVENTS_SECRET],
        eventTimings: { retryDelaysMs: [50], pollIntervalMs: 50 },
      },
    });
  });
  after(async () => {
    await pair?.close();
    await endpoint?.close();
  });

  async function linked(order = `order-${randomUUID()}`) {
    const { sessionId, consumerUrl } = await pair.startVerification({ merchantTransactionId: order });
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const session = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { outcome: { linkRef: string } };
    return { order, linkRef: session.outcome.linkRef };
  }
  const input = (order: string, linkRef: string) => ({
    linkRef,
    merchantUserId: PURCHASE.merchantUserId,
    merchantTransactionId: order,
    amount: PURCHASE.amount,
    currency: PURCHASE.currency,
  });

  test('pays an order, replays a retry with the same key, refuses a second payment, and reads the payment and the link', async () => {
    assert.equal(
      (await fetch(`${pair.baseUrl}/transactions`, { method: 'POST' })).status,
      404,
      'no HTTP route without the API key',
    );
    const { order, linkRef } = await linked();
    const account = await pair.proxy.readLink(linkRef);
    assert.equal(account.merchantTransactionId, order);
    assert.ok(account.accountToken.length > 0, 'the server gets the token in process');
    const charged = pair.provider.stats.transactions;
    const paid = await pair.proxy.pay(input(order, linkRef), { idempotencyKey: `pay-${order}` });
    assert.equal(paid.status, 201);
    assert.equal(paid.replayed, false);
    assert.equal(paid.body.transactionStatus, 'APPROVED');
    const again = await pair.proxy.pay(input(order, linkRef), { idempotencyKey: `pay-${order}` });
    assert.deepEqual([again.status, again.replayed, again.body.transactionId], [201, true, paid.body.transactionId]);
    await assert.rejects(
      pair.proxy.pay(input(order, linkRef)),
      (error: unknown) => error instanceof ProblemError && error.status === 409 && error.slug === 'order-already-paid',
    );
    assert.equal(pair.provider.stats.transactions, charged + 1);
    const payment = await pair.proxy.readPayment(order);
    assert.deepEqual([payment?.state, payment?.transactionId], ['completed', paid.body.transactionId]);
    assert.equal(await pair.proxy.readPayment('order-never-paid'), undefined);
    assert.equal((await pair.proxy.readLink(linkRef)).redeemedFor, order);
  });

  test('refuses bad input as the routes do: a ProblemError naming the field', async () => {
    const { order, linkRef } = await linked();
    await assert.rejects(
      pair.proxy.pay({ ...input(order, linkRef), amount: '1.00' }),
      (error: unknown) => error instanceof ProblemError && error.status === 422 && error.errors?.[0]?.path === 'amount',
    );
    await assert.rejects(
      pair.proxy.pay({ ...input(order, linkRef), extra: 1 } as never),
      (error: unknown) => error instanceof ProblemError && error.status === 400,
    );
    await assert.rejects(
      pair.proxy.readLink('AAAAAAAAAAAAAAAAAAAAAA'),
      (error: unknown) => error instanceof ProblemError && error.status === 404,
    );
    await assert.rejects(
      pair.proxy.listEvents({ after: `evt_${'A'.repeat(22)}` }),
      (error: unknown) => error instanceof ProblemError && error.status === 400 && error.errors?.[0]?.path === 'after',
    );
  });

  test('forgets a user in process, with no API key: the counts; a bad id is a 400 naming merchantUserId', async () => {
    const { linkRef } = await linked();
    const forgotten = await pair.proxy.forgetUser(PURCHASE.merchantUserId);
    assert.ok(forgotten.sessions >= 1, JSON.stringify(forgotten));
    await assert.rejects(
      pair.proxy.readLink(linkRef),
      (error: unknown) => error instanceof ProblemError && error.status === 404,
    );
    assert.deepEqual(Object.values(await pair.proxy.forgetUser(PURCHASE.merchantUserId)), [0, 0, 0, 0, 0, 0]);
    await assert.rejects(
      pair.proxy.forgetUser(' '),
      (error: unknown) =>
        error instanceof ProblemError && error.status === 400 && error.errors?.[0]?.path === 'merchantUserId',
    );
  });

  test("lists events, and verifies a delivery's signature: the event, or WebhookSignatureError for a forged or altered one", async () => {
    const { order } = await linked();
    const listed = await pair.proxy.listEvents({ limit: 100 });
    const event = listed.events.find((e) => e.type === 'link.succeeded' && e.data.merchantTransactionId === order);
    assert.ok(event, 'link.succeeded is listed');
    const delivery = await (async () => {
      for (let i = 0; i < 200; i++) {
        const found = endpoint.deliveries.find((d) => d.event?.id === event.id);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error('no delivery');
    })();
    // The listed event is the envelope the endpoint received, with where its delivery stands beside it.
    const { delivery: state, ...envelope } = event;
    assert.equal(typeof state.state, 'string');
    assert.deepEqual(pair.proxy.verifyEvent(delivery.body, delivery.headers), envelope);
    assert.deepEqual(pair.proxy.verifyEvent(Buffer.from(delivery.body), new Headers(delivery.headers)), envelope);
    assert.throws(
      () => pair.proxy.verifyEvent(delivery.body.replace(order, 'order-forged'), delivery.headers),
      WebhookSignatureError,
    );
    assert.throws(
      () => pair.proxy.verifyEvent(delivery.body, { ...delivery.headers, 'webhook-signature': 'v1,AAAA' }),
      WebhookSignatureError,
    );
    assert.throws(() => pair.proxy.verifyEvent(delivery.body, {}), WebhookSignatureError);
  });

  test('sends a signed sample of every event type to the events endpoint (not recorded, not listed), and of one type', async () => {
    const before = endpoint.events.length;
    const listedBefore = (await pair.proxy.listEvents({ limit: 100 })).events.length;
    const results = await pair.proxy.sendTestEvents();
    assert.deepEqual(
      results.map((r) => [r.event.type, r.status]),
      EVENT_TYPES.map((type) => [type, 204]),
    );
    const received = endpoint.events.slice(before);
    assert.deepEqual(
      received.map((e) => e.type),
      EVENT_TYPES,
      'each verified with the events secret, in order',
    );
    for (const event of received) assert.doesNotThrow(() => MerchantEventSchema.parse(event), event.type);
    assert.equal((await pair.proxy.listEvents({ limit: 100 })).events.length, listedBefore, 'samples are not listed');
    const [one] = await pair.proxy.sendTestEvents('payment.unknown');
    assert.equal(one?.event.type, 'payment.unknown');
    await assert.rejects(pair.proxy.sendTestEvents('no.such' as never), TypeError);
  });
});

describe('npx obv-link-proxy send-test-event', () => {
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'proxy/cli.ts', 'send-test-event', ...args], {
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.once('exit', (code) => resolve({ code, out }));
    });
  const sandbox = (url: string) => ({
    OBV_SANDBOX: 'true',
    OBV_BASE_URL: 'http://127.0.0.1:9',
    OBV_PUBLIC_URL: 'http://127.0.0.1:9',
    OBV_EVENTS_URL: url,
    OBV_EVENTS_SECRETS: EVENTS_SECRET,
    OBV_STORAGE: 'memory',
  });

  test('sends one type, or says what is wrong: an unknown type (2), no events URL (2), an endpoint that refuses (1)', async () => {
    const endpoint = await startMerchantEndpoint();
    try {
      const ok = await run(['link.succeeded'], sandbox(endpoint.url));
      assert.equal(ok.code, 0, ok.out);
      assert.match(ok.out, /^link\.succeeded evt_\S+ → 204$/m);
      assert.equal(endpoint.events.at(-1)?.type, 'link.succeeded');
      const unknown = await run(['link.nope'], sandbox(endpoint.url));
      assert.equal(unknown.code, 2);
      assert.match(unknown.out, /unknown event type "link\.nope"/);
      const { OBV_EVENTS_URL: _url, ...noUrl } = sandbox(endpoint.url);
      const off = await run([], noUrl);
      assert.equal(off.code, 2);
      assert.match(off.out, /set OBV_EVENTS_URL and OBV_EVENTS_SECRETS/);
      endpoint.answer = () => 'fail';
      const refused = await run(['payment.failed'], sandbox(endpoint.url));
      assert.equal(refused.code, 1);
      assert.match(refused.out, /payment\.failed evt_\S+ → 500 \(answered 500\)/);
    } finally {
      await endpoint.close();
    }
  });
});
