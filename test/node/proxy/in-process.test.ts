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
import { ProblemError, WebhookSignatureError } from '../../../proxy/index.ts';

describe('in-process calls on the object createObvProxy returns', () => {
  let pair: ProxyPair;
  let endpoint: MerchantEndpoint;
  before(async () => {
    endpoint = await startMerchantEndpoint();
    // No merchant API key: the HTTP routes for the merchant's server are absent, the in-process calls are not.
    pair = await startProxyPair({ proxy: { merchantApiKey: undefined, eventsUrl: endpoint.url, eventsSecrets: [EVENTS_SECRET], eventTimings: { retryDelaysMs: [50], pollIntervalMs: 50 } } });
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
  const input = (order: string, linkRef: string) => ({ linkRef, merchantUserId: PURCHASE.merchantUserId, merchantTransactionId: order, amount: PURCHASE.amount, currency: PURCHASE.currency });

  test('pays an order, replays a retry with the same key, refuses a second payment, and reads the payment and the link', async () => {
    assert.equal((await fetch(`${pair.baseUrl}/transactions`, { method: 'POST' })).status, 404, 'no HTTP route without the API key');
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
    await assert.rejects(pair.proxy.pay(input(order, linkRef)), (error: unknown) =>
      error instanceof ProblemError && error.status === 409 && error.slug === 'order-already-paid');
    assert.equal(pair.provider.stats.transactions, charged + 1);
    const payment = await pair.proxy.readPayment(order);
    assert.deepEqual([payment?.state, payment?.transactionId], ['completed', paid.body.transactionId]);
    assert.equal(await pair.proxy.readPayment('order-never-paid'), undefined);
    assert.equal((await pair.proxy.readLink(linkRef)).redeemedFor, order);
  });

  test('refuses bad input as the routes do: a ProblemError naming the field', async () => {
    const { order, linkRef } = await linked();
    await assert.rejects(pair.proxy.pay({ ...input(order, linkRef), amount: '1.00' }), (error: unknown) =>
      error instanceof ProblemError && error.status === 422 && error.errors?.[0]?.path === 'amount');
    await assert.rejects(pair.proxy.pay({ ...input(order, linkRef), extra: 1 } as never), (error: unknown) =>
      error instanceof ProblemError && error.status === 400);
    await assert.rejects(pair.proxy.readLink('AAAAAAAAAAAAAAAAAAAAAA'), (error: unknown) => error instanceof ProblemError && error.status === 404);
    await assert.rejects(pair.proxy.listEvents({ after: `evt_${'A'.repeat(22)}` }), (error: unknown) =>
      error instanceof ProblemError && error.status === 400 && error.errors?.[0]?.path === 'after');
  });

  test('lists events, and verifies a delivery\'s signature: the event, or WebhookSignatureError for a forged or altered one', async () => {
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
    assert.deepEqual(pair.proxy.verifyEvent(delivery.body, delivery.headers), event);
    assert.deepEqual(pair.proxy.verifyEvent(Buffer.from(delivery.body), new Headers(delivery.headers)), event);
    assert.throws(() => pair.proxy.verifyEvent(delivery.body.replace(order, 'order-forged'), delivery.headers), WebhookSignatureError);
    assert.throws(() => pair.proxy.verifyEvent(delivery.body, { ...delivery.headers, 'webhook-signature': 'v1,AAAA' }), WebhookSignatureError);
    assert.throws(() => pair.proxy.verifyEvent(delivery.body, {}), WebhookSignatureError);
  });
});
