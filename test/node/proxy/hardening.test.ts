// Abuse limits an attacker would try first: a spoofed X-Forwarded-For, an Origin equal to the Host (DNS
// rebinding), an Idempotency-Key reused with another body, guessing the /transactions key, and
// requests made to grow the log. Plus the operator's view: /readyz and the Prometheus metrics.
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';
import WebSocket from 'ws';
import { MemorySessionStore } from '../../../proxy/storage/memory/session-store.ts';
import { SessionBackendUnavailableError, StorageFullError } from '../../../proxy/storage/errors.ts';
import { startProxyPair, storageWith } from '../../helpers/proxy-harness.ts';
import { subscribedRelay } from '../../helpers/relay-client.ts';
import { postNotification, successPayload } from '../../helpers/webhooks.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

async function start(base: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(`${base}/verifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** A raw request with the Host header of our choosing (fetch does not let a caller set Host). */
function rawRequest(
  url: string,
  options: { method?: string; headers: Record<string, string>; body?: string },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method ?? 'GET', headers: options.headers }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

describe('client address and OBV_TRUST_PROXY', () => {
  test('a spoofed X-Forwarded-For does not lift the start limit when no proxy is trusted, and is warned about once', async (t) => {
    const pair = await startProxyPair({ proxy: { rateLimit: 3 } });
    t.after(() => pair.close());
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      statuses.push(
        (
          await start(
            pair.baseUrl,
            { linkToken: await pair.createLinkSession() },
            { origin: pair.origin, 'x-forwarded-for': `198.51.100.${i}` },
          )
        ).status,
      );
    }
    assert.deepEqual(statuses, [201, 201, 201, 429, 429]);
    assert.equal(pair.logs.find('X-Forwarded-For but OBV_TRUST_PROXY is not set').length, 1);
  });

  test('with a hop count the client address is the one the trusted hop saw, not one the client wrote', async (t) => {
    const pair = await startProxyPair({ proxy: { trustProxy: 1 } });
    t.after(() => pair.close());
    await pair.startVerification({ merchantTransactionId: 'order-hop' }, { 'x-forwarded-for': '6.6.6.6, 203.0.113.7' });
    const verification = [...pair.provider.state.verifications.values()].find(
      (v) => v.request.merchant.merchantTransactionId === 'order-hop',
    );
    assert.equal(verification?.request.transaction.originatorIp, '203.0.113.7');
  });
});

describe('origin check (DNS rebinding)', () => {
  test("an Origin equal to the request's Host but not the public origin is refused over HTTP and WebSocket", async (t) => {
    const pair = await startProxyPair();
    t.after(() => pair.close());
    const port = new URL(pair.origin).port;
    // What a rebound page sends: its own origin, and the Host it resolved to us.
    const rebound = { origin: `http://rebound.example:${port}`, host: `rebound.example:${port}` };
    const before = pair.provider.stats.verificationRequests;
    const status = await rawRequest(`${pair.baseUrl}/verifications`, {
      method: 'POST',
      headers: { ...rebound, 'content-type': 'application/json' },
      body: JSON.stringify({ linkToken: await pair.createLinkSession() }),
    });
    assert.equal(status, 403);
    assert.equal(pair.provider.stats.verificationRequests, before);
    const upgrade = await new Promise<string>((resolve) => {
      const socket = new WebSocket(pair.wsUrl, { origin: rebound.origin, headers: { host: rebound.host } });
      socket.on('open', () => resolve('open'));
      socket.on('error', (error) => resolve(error.message));
    });
    assert.match(upgrade, /Unexpected server response: 403/);
  });
});

describe('Idempotency-Key bound to the body', () => {
  test('the same key with the same body returns the first session; with another body it is a 422', async (t) => {
    const pair = await startProxyPair();
    t.after(() => pair.close());
    const headers = { origin: pair.origin, 'idempotency-key': 'checkout-42' };
    const body = { linkToken: await pair.createLinkSession({ amount: '1.00' }) };
    const first = await start(pair.baseUrl, body, headers);
    assert.equal(first.status, 201);
    const again = await start(pair.baseUrl, body, headers);
    assert.equal(again.json.sessionId, first.json.sessionId);
    const other = await start(pair.baseUrl, { linkToken: await pair.createLinkSession({ amount: '999.00' }) }, headers);
    assert.equal(other.status, 422);
    assert.equal(other.json.type, 'urn:obv-link:problem:idempotency-key-reused');
    assert.ok(
      !JSON.stringify(other.json).includes(String(first.json.consumerUrl)),
      "the first session's bank link is not returned",
    );
  });

  test('two different bodies racing on one key: one session, one 422', async (t) => {
    const pair = await startProxyPair();
    t.after(() => pair.close());
    const headers = { origin: pair.origin, 'idempotency-key': 'race-1' };
    const bodies = [
      { linkToken: await pair.createLinkSession({ amount: '1.00' }) },
      { linkToken: await pair.createLinkSession({ amount: '2.00' }) },
    ];
    const results = await Promise.all(bodies.map((body) => start(pair.baseUrl, body, headers)));
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 422]);
  });
});

// The failed API-key limit has its own file: merchant-auth.test.ts.

describe('log hygiene', () => {
  test('refused origins are logged once per origin, truncated, naming OBV_ALLOWED_ORIGINS', async (t) => {
    const pair = await startProxyPair();
    t.after(() => pair.close());
    const huge = `https://${'a'.repeat(15_000)}.example`;
    const before = pair.logs.lines.join('\n').length;
    for (let i = 0; i < 60; i++) {
      await new Promise<void>((resolve) => {
        const socket = new WebSocket(pair.wsUrl, { origin: huge });
        socket.on('error', () => resolve());
        socket.on('open', () => resolve());
      });
    }
    const body = { linkToken: await pair.createLinkSession() };
    for (let i = 0; i < 20; i++) await start(pair.baseUrl, body, { origin: huge });
    const refusals = pair.logs.find('OBV_ALLOWED_ORIGINS');
    assert.equal(refusals.length, 1);
    assert.equal(refusals[0]?.level, 40);
    assert.ok(String(refusals[0]?.origin).length <= 81);
    const grown = pair.logs.lines.join('\n').length - before;
    assert.ok(grown < 5_000, `80 refusals grew the log by ${grown} characters`);
  });

  test('bad notification signatures are counted but logged at most once a minute', async (t) => {
    const pair = await startProxyPair();
    t.after(() => pair.close());
    const { sessionId } = await pair.startVerification();
    const url = await pair.notificationUrl(sessionId);
    for (let i = 0; i < 20; i++) {
      const response = await postNotification(url, successPayload(), {
        secret: `whsec_${Buffer.from('not-the-secret-at-all-0123456789').toString('base64')}`,
      });
      assert.equal(response.status, 401);
    }
    assert.equal(pair.logs.find('bad signature').length, 1);
    const metrics = await pair.proxy.metrics.registry.getSingleMetricAsString('obv_notifications_refused_total');
    assert.match(metrics, /obv_notifications_refused_total\{reason="signature"\} 20/);
  });
});

describe('/readyz', () => {
  test('is ready while the session store takes a write, 503 when it does not (unreachable, or full), and 503 once draining', async (t) => {
    /** Reads keep working throughout: readiness must prove the store takes a write. */
    class FlakyStore extends MemorySessionStore {
      down: Error | undefined;
      override async mark(key: string, value: string, ttlMs: number) {
        if (this.down) throw this.down;
        return super.mark(key, value, ttlMs);
      }
    }
    const store = new FlakyStore();
    const pair = await startProxyPair({ proxy: { backend: storageWith({ sessionStore: store }) } });
    t.after(async () => {
      await pair.close();
      await store.close();
    });
    const ready = await fetch(`${pair.baseUrl}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', sessionStore: 'ok' });
    store.down = new SessionBackendUnavailableError('store down');
    const unreachable = await fetch(`${pair.baseUrl}/readyz`);
    assert.equal(unreachable.status, 503);
    assert.deepEqual(await unreachable.json(), { status: 'unavailable', sessionStore: 'unreachable' });
    store.down = new StorageFullError('/var/lib/obv-link', 0);
    const full = await fetch(`${pair.baseUrl}/readyz`);
    assert.equal(full.status, 503);
    assert.deepEqual(await full.json(), { status: 'unavailable', sessionStore: 'full' });
    store.down = undefined;
    assert.equal((await fetch(`${pair.baseUrl}/readyz`)).status, 200);
    await pair.proxy.drain();
    const draining = await fetch(`${pair.baseUrl}/readyz`);
    assert.equal(draining.status, 503);
    assert.deepEqual(await draining.json(), { status: 'draining' });
    assert.equal((await fetch(`${pair.baseUrl}/healthz`)).status, 200, 'liveness is unaffected');
  });
});

describe('metrics', () => {
  test('count starts, outcomes, upstream latency, token refreshes and open sockets, and are not on the public router', async (t) => {
    const pair = await startProxyPair();
    t.after(() => pair.close());
    const { sessionId } = await pair.startVerification();
    const client = await subscribedRelay(pair.wsUrl, pair.origin, sessionId);
    const registry = pair.proxy.metrics.registry;
    assert.match(await registry.getSingleMetricAsString('obv_relay_open_sockets'), /obv_relay_open_sockets 1/);
    await postNotification(await pair.notificationUrl(sessionId), successPayload());
    await client.closed;
    const text = await registry.metrics();
    assert.match(text, /obv_verification_starts_total\{result="started"\} 1/);
    assert.match(text, /obv_outcomes_total\{status="success"\} 1/);
    assert.match(text, /obv_upstream_request_duration_seconds_count\{endpoint="verification",result="ok"\} 1/);
    assert.match(text, /obv_token_refreshes_total\{result="ok"\} 1/);
    assert.equal((await fetch(`${pair.baseUrl}/metrics`)).status, 404);
  });
});

describe('X-Content-Type-Options', () => {
  test('every proxy answer says nosniff: JSON, problems, the HTML pages, the script, the notification answer', async (t) => {
    const pair = await startProxyPair();
    t.after(() => pair.close());
    const { sessionId } = await pair.startVerification();
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${pair.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: pair.origin, ...headers },
        body,
      });
    const answers = {
      start: await post('/verifications', JSON.stringify({ linkToken: await pair.createLinkSession() })),
      'invalid start': await post('/verifications', '{"amount": "5.00"}'),
      session: await lookupSession(pair.baseUrl, sessionId),
      'unknown route': await fetch(`${pair.baseUrl}/nothing-here`),
      'wrong key': await post('/transactions', '{}', { authorization: 'Bearer wrong-key-padding-padding-padding' }),
      connecting: await fetch(`${pair.baseUrl}/connecting`),
      'return page': await fetch(await pair.returnUrl(sessionId), { headers: { accept: 'text/html' } }),
      script: await fetch(`${pair.baseUrl}/return-page.js`),
      notification: await postNotification(await pair.notificationUrl(sessionId), successPayload()),
      healthz: await fetch(`${pair.baseUrl}/healthz`),
    };
    for (const [name, response] of Object.entries(answers)) {
      await response.arrayBuffer();
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', `${name} (${response.status})`);
    }
    assert.equal(answers['invalid start'].status, 400);
    assert.equal(answers['wrong key'].status, 401);
  });
});
