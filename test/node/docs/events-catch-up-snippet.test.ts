// The events guide's catch-up snippet (`<!-- snippet: events-catch-up -->`), run as written against a
// proxy whose events endpoint refuses link.succeeded and accepts payment.succeeded (issue 31's outage):
// it hands the missed event to the handler, acknowledges it, and leaves nothing undelivered.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import type { ListedEvent, ObvProxy } from '../../../proxy/index.ts';
import { startProxyPair } from '../../helpers/proxy-harness.ts';
import { EVENTS_SECRET, startMerchantEndpoint } from '../../helpers/merchant-endpoint.ts';

const ROOT = join(import.meta.dirname, '../../..');
const MARKER = '<!-- snippet: events-catch-up -->';

/** The snippet's code in the events guide. */
function snippet(): { file: string; code: string } {
  const file = 'docs/EVENTS.md';
  const text = readFileSync(join(ROOT, file), 'utf8');
  const at = text.indexOf(MARKER);
  assert.ok(at !== -1, `${file} holds ${MARKER}`);
  const block = /^```js\n([\s\S]*?)^```/m.exec(text.slice(at));
  assert.ok(block, `${file}: a js block follows ${MARKER}`);
  return { file, code: block[1]! };
}

test('the catch-up snippet finds the event the endpoint refused, whatever the delivery order, and acknowledges it', async () => {
  const { file, code } = snippet();
  const dir = mkdtempSync(join(tmpdir(), 'obv-snippet-'));
  const endpoint = await startMerchantEndpoint();
  endpoint.answer = ({ event }) => (event?.type === 'link.succeeded' ? 'fail' : 'ok');
  const pair = await startProxyPair({
    proxy: {
      eventsUrl: endpoint.url,
      eventsSecrets: [EVENTS_SECRET],
      eventTimings: { retryDelaysMs: [60_000], pollIntervalMs: 25 },
    },
  });
  try {
    const order = {
      merchantUserId: 'user-42',
      merchantTransactionId: 'order-snippet',
      amount: '49.99',
      currency: 'USD',
    };
    const linked = await pair.proxy.events.emit('link.succeeded', {
      ...order,
      linkRef: 'ref-snippet',
      accountLabel: 'Checking ••••4321',
      fiName: 'Bank',
      fiAccountType: 'CHECKING',
    });
    const paid = await pair.proxy.events.emit('payment.succeeded', {
      ...order,
      paymentId: 'pay_snippet',
      transactionId: 't-1',
      transactionStatus: 'APPROVED',
    });
    await endpoint.waitForDistinct(1);
    // Both attempted: the payment went through (the newer event), the link was refused.
    for (let i = 0; i < 500 && !endpoint.deliveries.some((delivery) => delivery.event?.id === linked!.id); i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(endpoint.events.filter((event) => event.id === paid!.id).length, 1);
    // The endpoint's answer reaches the outbox a moment after the endpoint saw the event: wait for the proxy
    // to record the payment's delivery, so the snippet meets the state the guide describes.
    const deliveredPayment = async () =>
      (await pair.proxy.listEvents({})).events.find((event) => event.id === paid!.id)?.delivery.state === 'delivered';
    for (let i = 0; i < 500 && !(await deliveredPayment()); i++)
      await new Promise((resolve) => setTimeout(resolve, 20));

    const module = join(dir, 'catch-up.mjs');
    writeFileSync(module, code);
    const { catchUp } = (await import(pathToFileURL(module).href)) as {
      catchUp: (proxy: ObvProxy, handle: (event: ListedEvent) => Promise<void>) => Promise<void>;
    };
    const handled: ListedEvent[] = [];
    await catchUp(pair.proxy, async (event) => {
      handled.push(event);
    });
    assert.deepEqual(
      handled.map((event) => event.id),
      [linked!.id],
      `${file}: the snippet hands over the missed event, and only it`,
    );
    assert.deepEqual(handled[0]!.data, linked!.data);
    assert.deepEqual((await pair.proxy.listEvents({ delivery: 'undelivered' })).events, []);
    const after = (await pair.proxy.listEvents({})).events.find((event) => event.id === linked!.id);
    assert.deepEqual([after?.delivery.state, after?.delivery.acknowledgedBy], ['delivered', 'api']);
    // Run again: nothing left to handle.
    await catchUp(pair.proxy, async (event) => {
      handled.push(event);
    });
    assert.equal(handled.length, 1);
  } finally {
    await pair.close();
    await endpoint.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
