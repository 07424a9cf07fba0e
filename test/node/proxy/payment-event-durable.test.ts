// A payment's `payment.succeeded` is part of what its 201 acknowledges: when the event cannot be recorded
// (the database failed between the payment's commit and the event's, as in a failover), the payment stands
// but is answered 503, and the merchant's retry with the same Idempotency-Key replays it and records the
// event. Before, the 201 went out and the event was lost for good (found by the failover rehearsal).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createStorage } from '../../../proxy/index.ts';
import { SessionBackendUnavailableError } from '../../../proxy/storage/errors.ts';
import type { EventOutbox } from '../../../proxy/storage/outbox.ts';
import { startProxyPair, TEST_MERCHANT_API_KEY, PURCHASE, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { EVENTS_SECRET, startMerchantEndpoint, type MerchantEndpoint } from '../../helpers/merchant-endpoint.ts';
import { signInAtBank } from '../redis/cluster.ts';

describe('payment.succeeded that cannot be recorded', () => {
  let endpoint: MerchantEndpoint;
  let pair: ProxyPair;
  const memory = createStorage({ kind: 'memory' });
  /** Fails the next append of a payment.succeeded, as a database that went away between two commits. */
  let failNextPaymentEvent = false;
  const append: EventOutbox['append'] = async (event, nowMs) => {
    if (event.type === 'payment.succeeded' && failNextPaymentEvent) {
      failNextPaymentEvent = false;
      throw new SessionBackendUnavailableError('the database went away');
    }
    return memory.eventOutbox.append(event, nowMs);
  };
  // The memory outbox with that one method replaced (its own methods keep their private state).
  const outbox = new Proxy(memory.eventOutbox, {
    get(target, name) {
      if (name === 'append') return append;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });

  before(async () => {
    endpoint = await startMerchantEndpoint();
    pair = await startProxyPair({
      proxy: {
        backend: { ...memory, eventOutbox: outbox },
        eventsUrl: endpoint.url,
        eventsSecrets: [EVENTS_SECRET],
        eventTimings: { retryDelaysMs: [50, 100], attemptTimeoutMs: 500, pollIntervalMs: 25, leaseMs: 2_000 },
      },
    });
  });
  after(async () => {
    await pair?.close();
    await memory.close();
    await endpoint?.close();
  });

  test('answers 503, then the retry with the same key answers the payment and the event is delivered', async () => {
    const merchantTransactionId = `order-event-durable-${Date.now()}`;
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
    failNextPaymentEvent = true;
    const first = await pay();
    await first.body?.cancel();
    assert.equal(first.status, 503, 'not acknowledged while its event is not recorded');
    const retried = await pay();
    assert.equal(retried.status, 201);
    assert.equal(retried.headers.get('idempotent-replayed'), 'true');
    // Charged once, and told once.
    const charges = [...pair.provider.state.transactions.values()].filter(
      (t) => t.merchantTransactionId === merchantTransactionId,
    );
    assert.equal(charges.length, 1);
    const deadline = Date.now() + 10_000;
    const told = () =>
      endpoint.events.filter(
        (event) => event.type === 'payment.succeeded' && event.data.merchantTransactionId === merchantTransactionId,
      );
    while (told().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.equal(new Set(told().map((event) => event.id)).size, 1);
  });
});
