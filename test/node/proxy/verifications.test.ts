// POST /verifications — validation, idempotency, CORS, limits and the merchant's enrichStart hook. What
// the body may carry (a link token, or a language for enrichStart) is in link-sessions.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import type { VerificationDraft } from '../../../proxy/index.ts';
import {
  draftWithPurchase,
  PURCHASE,
  startProxy,
  startProxyPair,
  type ProxyPair,
  type RunningProxy,
} from '../../helpers/proxy-harness.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: { path: string; message: string }[];
}

async function post(base: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}/verifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    response,
    status: response.status,
    json: text ? (JSON.parse(text) as Problem & Record<string, unknown>) : undefined,
  };
}

describe('starting verifications', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair({ proxy: { allowedOrigins: ['https://shop.example'] } });
  });
  after(() => pair.close());

  test('sends the upstream request with trusted merchant data and per-session URLs', async () => {
    const { sessionId } = await pair.startVerification({ merchantTransactionId: 'order-trusted' });
    const verification = [...pair.provider.state.verifications.values()].find(
      (v) => v.request.merchant.merchantTransactionId === 'order-trusted',
    );
    assert.ok(verification);
    const { request } = verification;
    assert.equal(request.countryCode, 'US');
    assert.equal(request.merchant.merchantId, 'merchant-test');
    assert.equal(request.merchant.merchantSubId, 'sub-1');
    assert.equal(request.merchant.merchantUserId, 'user-42');
    assert.equal(request.merchant.returnURL, await pair.returnUrl(sessionId));
    assert.ok(
      !request.merchant.returnURL?.includes(sessionId),
      'the return URL carries a separate reference, never the session id',
    );
    assert.equal(request.merchant.notificationURL, await pair.notificationUrl(sessionId));
    assert.ok(
      !request.merchant.notificationURL?.includes(sessionId),
      'the notification URL carries a separate reference',
    );
    assert.equal(request.transaction.product, 'ACH');
    assert.equal(request.transaction.originatorIp, '127.0.0.1');
    assert.deepEqual(request.consumer, PURCHASE.consumer);
  });

  test('names every invalid field in a 400 problem', async () => {
    const { status, json, response } = await post(pair.baseUrl, {
      linkToken: 'lt_short',
      consent: 'v 1',
      amount: '12.345',
    });
    assert.equal(status, 400);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(json?.type, 'urn:obv-link:problem:validation');
    assert.deepEqual(json?.errors?.map((e) => e.path).sort(), ['amount', 'consent', 'linkToken']);
    const language = await post(pair.baseUrl, { language: '!!' });
    assert.deepEqual(
      language.json?.errors?.map((e) => e.path),
      ['language'],
    );
  });

  test("sends the link session's consumer when no enrichStart hook is set (npm start)", async () => {
    const consumer = { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com' };
    await pair.startVerification({ merchantTransactionId: 'order-session-consumer', consumer });
    const verification = [...pair.provider.state.verifications.values()].find(
      (v) => v.request.merchant.merchantTransactionId === 'order-session-consumer',
    );
    assert.deepEqual(verification?.request.consumer, consumer);
  });

  test('rejects a body that is not JSON with 400', async () => {
    const { status, json } = await post(pair.baseUrl, '{"amount": ');
    assert.equal(status, 400);
    assert.equal(json?.errors?.[0]?.path, 'body');
  });

  test('rejects a non-JSON content type with 415', async () => {
    const response = await fetch(`${pair.baseUrl}/verifications`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    assert.equal(response.status, 415);
  });

  test('rejects an oversize body with 413', async () => {
    const { status, json } = await post(pair.baseUrl, {
      linkToken: await pair.createLinkSession(),
      padding: 'x'.repeat(20_000),
    });
    assert.equal(status, 413);
    assert.equal(json?.status, 413);
  });

  test('makes one verification for a double click with the same Idempotency-Key', async () => {
    const body = { linkToken: await pair.createLinkSession() };
    const before = pair.provider.stats.verificationRequests;
    const first = await post(pair.baseUrl, body, { 'idempotency-key': 'double-click-1' });
    const second = await post(pair.baseUrl, body, { 'idempotency-key': 'double-click-1' });
    assert.equal(first.status, 201);
    assert.equal(second.status, 201);
    assert.deepEqual(second.json, first.json);
    assert.equal(pair.provider.stats.verificationRequests - before, 1);
  });

  test('makes one upstream verification for concurrent requests with the same key', async () => {
    const body = { linkToken: await pair.createLinkSession() };
    const before = pair.provider.stats.verificationRequests;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => post(pair.baseUrl, body, { 'idempotency-key': 'concurrent-1' })),
    );
    assert.ok(results.every((r) => r.status === 201));
    assert.equal(new Set(results.map((r) => r.json?.sessionId)).size, 1);
    assert.equal(pair.provider.stats.verificationRequests - before, 1);
  });

  test('lets a key be used again after the start with it failed', async () => {
    const failed = await post(
      pair.baseUrl,
      { linkToken: `lt_${'A'.repeat(32)}` },
      { 'idempotency-key': 'retry-after-fail' },
    );
    assert.equal(failed.status, 404);
    const ok = await post(
      pair.baseUrl,
      { linkToken: await pair.createLinkSession() },
      { 'idempotency-key': 'retry-after-fail' },
    );
    assert.equal(ok.status, 201);
  });

  test('rejects a malformed Idempotency-Key naming the header', async () => {
    const { status, json } = await post(
      pair.baseUrl,
      { linkToken: await pair.createLinkSession() },
      { 'idempotency-key': 'x'.repeat(300) },
    );
    assert.equal(status, 400);
    assert.equal(json?.errors?.[0]?.path, 'Idempotency-Key');
  });

  test('answers a CORS preflight from an allowed origin', async () => {
    const response = await fetch(`${pair.baseUrl}/verifications`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,idempotency-key',
      },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), 'https://shop.example');
    assert.match(response.headers.get('access-control-allow-headers') ?? '', /Idempotency-Key/);
  });

  test('allows a start from an allowed cross origin', async () => {
    const { status, response } = await post(
      pair.baseUrl,
      { linkToken: await pair.createLinkSession() },
      { origin: 'https://shop.example' },
    );
    assert.equal(status, 201);
    assert.equal(response.headers.get('access-control-allow-origin'), 'https://shop.example');
  });

  test('refuses a disallowed origin with a 403 the page can read, and starts nothing', async () => {
    const linkToken = await pair.createLinkSession();
    const before = pair.provider.stats.verificationRequests;
    const {
      status,
      response,
      json: body,
    } = await post(pair.baseUrl, { linkToken }, { origin: 'https://evil.example' });
    assert.equal(status, 403);
    // Readable by the page (so the element can say why), but nothing was started.
    assert.equal(response.headers.get('access-control-allow-origin'), 'https://evil.example');
    assert.match(JSON.stringify(body), /OBV_ALLOWED_ORIGINS/);
    assert.equal(pair.provider.stats.verificationRequests, before);
    const session = await lookupSession(pair.baseUrl, 'abcdefghijklmnopqrstuv', { origin: 'https://evil.example' });
    assert.equal(session.status, 403);
  });

  test('answers an unknown route with a JSON 404', async () => {
    const response = await fetch(`${pair.baseUrl}/nope`);
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as Problem).status, 404);
  });
});

describe("the merchant's enrichStart hook names the purchase", () => {
  let pair: ProxyPair;
  /** The draft each enrichStart call received. */
  const hookSaw: VerificationDraft[] = [];
  const SESSION_CONSUMER = { firstName: 'From', lastName: 'Session', email: 'session@example.com' };
  before(async () => {
    pair = await startProxyPair({
      proxy: {
        enrichStart: (req, request) => {
          hookSaw.push(structuredClone(request));
          // A merchant session with nothing in it: the draft goes on as the proxy made it.
          if (req.get('x-test-cart') === 'empty') return request;
          return {
            ...request,
            consumer: SESSION_CONSUMER,
            merchant: {
              ...request.merchant,
              merchantUserId: 'server-side-user',
              returnURL: 'https://attacker.example/',
            },
            transaction: { ...request.transaction, amount: '3.00' },
          };
        },
      },
    });
  });
  after(() => pair.close());

  test('lets enrichStart fill the request from the merchant session, but not move the return URL', async () => {
    const { sessionId } = await pair.startWith({ language: 'en' });
    const returnURL = await pair.returnUrl(sessionId);
    const verification = [...pair.provider.state.verifications.values()].find((v) => v.returnURL === returnURL);
    assert.ok(verification, 'the proxy kept its own returnURL');
    assert.equal(verification.request.merchant.merchantUserId, 'server-side-user');
    assert.deepEqual(verification.request.consumer, SESSION_CONSUMER);
    assert.equal(verification.request.transaction.amount, '3.00');
    assert.equal(verification.request.transaction.language, 'en');
  });

  test("gives enrichStart a draft holding nothing about the purchase but the proxy's defaults and the page's language", async () => {
    await pair.startWith({ language: 'es-US' });
    const draft = hookSaw.at(-1);
    assert.deepEqual(draft?.consumer, {});
    assert.match(draft?.merchant.merchantTransactionId ?? '', /^obv-[A-Za-z0-9_-]+$/);
    assert.equal(draft?.merchant.merchantUserId, undefined);
    assert.equal(draft?.merchant.merchantId, 'merchant-test');
    assert.equal(draft?.transaction.amount, undefined);
    assert.equal(draft?.transaction.dataPassThrough, undefined);
    assert.equal(draft?.transaction.currency, 'USD');
    assert.equal(draft?.transaction.language, 'es-US');
    await pair.startWith({});
    assert.equal(hookSaw.at(-1)?.transaction.language, undefined);
  });

  test('refuses a purchase field in the body with a hook too (400 naming each), without calling the hook', async () => {
    const calls = hookSaw.length;
    const { status, json } = await post(pair.baseUrl, {
      language: 'en',
      amount: '0.01',
      consumer: { firstName: 'Mallory', lastName: 'Page', email: 'mallory@example.com' },
    });
    assert.equal(status, 400);
    assert.deepEqual(json?.errors?.map((e) => e.path).sort(), ['amount', 'consumer']);
    assert.equal(hookSaw.length, calls);
  });

  test('names the fields the upstream request still lacks after the hook', async () => {
    const { status, json } = await post(pair.baseUrl, { language: 'en' }, { 'x-test-cart': 'empty' });
    assert.equal(status, 400);
    assert.deepEqual(json?.errors?.map((e) => e.path).sort(), [
      'amount',
      'consumer.email',
      'consumer.firstName',
      'consumer.lastName',
      'merchantUserId',
    ]);
  });
});

describe('starting verifications with limits and a failing provider', () => {
  let pair: ProxyPair;
  let broken: RunningProxy;
  before(async () => {
    pair = await startProxyPair({ proxy: { rateLimit: 3 } });
    broken = await startProxy({
      providerUrl: pair.provider.url,
      proxy: { clientSecret: 'wrong-secret-for-this-test' },
    });
  });
  after(async () => {
    await broken.close();
    await pair.close();
  });

  test('limits starts per client address with a 429 problem', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await post(pair.baseUrl, { linkToken: await pair.createLinkSession() })).status);
    assert.deepEqual(statuses, [201, 201, 201, 429]);
  });

  test('answers 502 without operator details when the credentials are rejected, and logs why', async () => {
    const { status, json } = await post(broken.baseUrl, { linkToken: await broken.createLinkSession() });
    assert.equal(status, 502);
    assert.equal(json?.type, 'urn:obv-link:problem:upstream-auth');
    assert.ok(!JSON.stringify(json).includes('OBV_CLIENT_SECRET'));
    const logged = broken.logs
      .records()
      .filter((r) => String(r.msg).includes('OBV_CLIENT_ID/OBV_CLIENT_SECRET were rejected'));
    assert.equal(logged.length, 1);
    assert.ok(!broken.logs.lines.join('\n').includes('wrong-secret-for-this-test'));
  });
});

describe('client address behind a reverse proxy', () => {
  test('takes originatorIp from X-Forwarded-For when OBV_TRUST_PROXY trusts the hop', async (t) => {
    const pair = await startProxyPair({ proxy: { trustProxy: 'loopback' } });
    t.after(() => pair.close());
    await pair.startVerification({ merchantTransactionId: 'order-forwarded' }, { 'x-forwarded-for': '203.0.113.7' });
    const verification = [...pair.provider.state.verifications.values()].find(
      (v) => v.request.merchant.merchantTransactionId === 'order-forwarded',
    );
    assert.equal(verification?.request.transaction.originatorIp, '203.0.113.7');
  });

  test('never hands one client the session another client started with the same Idempotency-Key', async (t) => {
    const pair = await startProxyPair({ proxy: { trustProxy: 'loopback' } });
    t.after(() => pair.close());
    const key = { 'idempotency-key': 'shared-or-guessed-key' };
    // Even the same body (the link token, had the attacker got it too) does not share the session.
    const body = { linkToken: await pair.createLinkSession() };
    const victim = await pair.startWith(body, { ...key, 'x-forwarded-for': '203.0.113.7' });
    const attacker = await pair.startWith(body, { ...key, 'x-forwarded-for': '198.51.100.9' });
    assert.notEqual(attacker.sessionId, victim.sessionId);
    const again = await pair.startWith(body, { ...key, 'x-forwarded-for': '203.0.113.7' });
    assert.equal(again.sessionId, victim.sessionId, 'the same client still gets its own session back');
  });

  test('ignores X-Forwarded-For when no proxy is trusted', async (t) => {
    const pair = await startProxyPair();
    t.after(() => pair.close());
    await pair.startVerification({ merchantTransactionId: 'order-direct' }, { 'x-forwarded-for': '203.0.113.7' });
    const verification = [...pair.provider.state.verifications.values()].find(
      (v) => v.request.merchant.merchantTransactionId === 'order-direct',
    );
    assert.equal(verification?.request.transaction.originatorIp, '127.0.0.1');
  });
});

describe('the page cannot ask for an account it linked before', () => {
  let pair: ProxyPair;
  before(async () => {
    // The merchant's server names the purchase from its own session (here: the user in a header the test sets).
    pair = await startProxyPair({
      proxy: {
        enrichStart: (req, draft) => draftWithPurchase(draft, req.get('x-test-user') ?? 'nobody'),
      },
    });
  });
  after(() => pair.close());

  /** Links an account through the sandbox bank and returns the link reference the browser got. */
  async function linkedRef(user = 'user-a'): Promise<string> {
    const { sessionId, consumerUrl } = await pair.startWith({ language: 'en' }, { 'x-test-user': user });
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const view = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { outcome: { linkRef: string } };
    return view.outcome.linkRef;
  }

  /** The upstream request of the session `sessionId`. */
  async function upstreamRequest(sessionId: string) {
    const returnURL = await pair.returnUrl(sessionId);
    return [...pair.provider.state.verifications.values()].find((v) => v.returnURL === returnURL)?.request;
  }

  test('ignores an accountToken sent by the page, with or without a link token: only the server supplies one', async () => {
    for (const body of [{ language: 'en' }, { linkToken: await pair.createLinkSession() }]) {
      const { sessionId } = await pair.startWith({ ...body, accountToken: 'acct-from-the-page' });
      const request = await upstreamRequest(sessionId);
      assert.ok(request, 'the verification was started');
      assert.equal(request.accountToken, undefined);
    }
  });

  // Re-verification by link reference was replaced by saved accounts: a link session that asks to
  // re-authorize one (test/e2e/returning-shopper.test.ts). An old page's linkRef starts a new link.
  test('ignores a link reference sent by the page, even for its own user: no stored token goes upstream', async () => {
    const linkRef = await linkedRef();
    const { sessionId } = await pair.startWith({ language: 'en', linkRef }, { 'x-test-user': 'user-a' });
    const request = await upstreamRequest(sessionId);
    assert.ok(request, 'the verification was started');
    assert.equal(request.accountToken, undefined);
  });
});
