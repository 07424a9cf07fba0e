// WebSocket caps, as bounded loopback floods (caps lowered through options so a few dozen sockets
// show each one): per session the newest replaces the oldest, per client address and in total the
// extra sockets are closed with 1013, and the server keeps answering HTTP throughout.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultSocketCap } from '../../../proxy/relay/socket-cap.ts';
import { startProxyPair, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { connectRelay, subscribedRelay, type RelayClient } from '../../helpers/relay-client.ts';
import { postNotification, successPayload } from '../../helpers/webhooks.ts';

/** Open sockets as the relay reports them (the metrics gauge sums the attached relays). */
async function openSockets(pair: ProxyPair): Promise<number> {
  const text = await pair.proxy.metrics.registry.getSingleMetricAsString('obv_relay_open_sockets');
  return Number(/obv_relay_open_sockets (\d+)/.exec(text)?.[1]);
}

describe('WebSocket caps', () => {
  test('a flood from one address holds at most the per-client cap; the rest are closed with 1013 and HTTP keeps answering', async (t) => {
    const pair = await startProxyPair({ proxy: { maxSocketsPerClient: 10 } });
    const clients: RelayClient[] = [];
    t.after(async () => {
      for (const client of clients) client.socket.terminate();
      await pair.close();
    });
    for (let i = 0; i < 60; i++) clients.push(await connectRelay(pair.wsUrl, { origin: pair.origin }));
    const closes = await Promise.all(clients.slice(10).map((client) => client.closed));
    assert.ok(
      closes.every((close) => close.code === 1013),
      JSON.stringify(closes.slice(0, 3)),
    );
    assert.equal(await openSockets(pair), 10);
    assert.equal((await fetch(`${pair.baseUrl}/healthz`)).status, 200);
    // A socket freed is a socket available again.
    clients[0]!.close();
    await clients[0]!.closed;
    for (let i = 0; i < 50 && (await openSockets(pair)) !== 9; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const again = await connectRelay(pair.wsUrl, { origin: pair.origin });
    clients.push(again);
    const early = await Promise.race([again.closed, new Promise((resolve) => setTimeout(() => resolve('open'), 100))]);
    assert.equal(early, 'open');
  });

  test('the total cap applies across addresses', async (t) => {
    const pair = await startProxyPair({ proxy: { maxSockets: 5, maxSocketsPerClient: 100 } });
    const clients: RelayClient[] = [];
    t.after(async () => {
      for (const client of clients) client.socket.terminate();
      await pair.close();
    });
    for (let i = 0; i < 8; i++) clients.push(await connectRelay(pair.wsUrl, { origin: pair.origin }));
    const closes = await Promise.all(clients.slice(5).map((client) => client.closed));
    assert.deepEqual(
      closes.map((close) => close.code),
      [1013, 1013, 1013],
    );
    assert.equal(await openSockets(pair), 5);
  });

  test('a new socket on a session replaces the oldest (4409); the newest still gets the outcome', async (t) => {
    const pair = await startProxyPair({ proxy: { maxSocketsPerSession: 2 } });
    t.after(() => pair.close());
    const { sessionId } = await pair.startVerification();
    const first = await subscribedRelay(pair.wsUrl, pair.origin, sessionId);
    const second = await subscribedRelay(pair.wsUrl, pair.origin, sessionId);
    const third = await subscribedRelay(pair.wsUrl, pair.origin, sessionId);
    assert.equal((await first.closed).code, 4409);
    await postNotification(await pair.notificationUrl(sessionId), successPayload());
    for (const client of [second, third]) {
      assert.equal((await client.next((message) => message.type === 'result')).type, 'result');
      assert.equal((await client.closed).code, 1000);
    }
  });

  test('the default total stays below the open-file limit', () => {
    assert.equal(defaultSocketCap(undefined), 10_000);
    assert.equal(defaultSocketCap(1_048_576), 10_000);
    assert.equal(defaultSocketCap(20_000), 10_000);
    assert.equal(defaultSocketCap(1_024), 768);
  });
});
