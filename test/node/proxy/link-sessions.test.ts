// Link sessions: the merchant's server makes each one (POST /link-sessions, or proxy.createLinkSession in
// Node), the page holds only the opaque link token, and a start made with it sends the server's values
// upstream, never the page's. In every mode, a start naming the purchase itself, or without a link token
// (and without an enrichStart hook), is refused.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { startProxy, startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

const AUTH = `Bearer ${TEST_MERCHANT_API_KEY}`;

/** What a merchant's server knows about one checkout. */
function checkout(extra: Record<string, unknown> = {}) {
  return {
    merchantUserId: 'user-8231',
    merchantTransactionId: `order-${randomUUID()}`,
    amount: '75.12',
    currency: 'USD',
    consumer: { firstName: 'Ana', lastName: 'López', email: 'ana@example.com' },
    language: 'es-US',
    ...extra,
  };
}

async function problemOf(response: Response): Promise<{ type: string; errors?: { path: string; message: string }[] }> {
  assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
  return (await response.json()) as { type: string; errors?: { path: string; message: string }[] };
}

describe('link sessions', () => {
  let pair: ProxyPair;
  let clock = Date.now();
  before(async () => {
    pair = await startProxyPair({ proxy: { now: () => clock } });
  });
  after(() => pair.close());

  const createLinkSession = (body: unknown, authorization: string | undefined = AUTH) =>
    fetch(`${pair.baseUrl}/link-sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(body),
    });

  async function newLinkSession(
    extra: Record<string, unknown> = {},
  ): Promise<{ linkToken: string; purchase: ReturnType<typeof checkout> }> {
    const purchase = checkout(extra);
    const response = await createLinkSession(purchase);
    assert.equal(response.status, 201);
    return { ...((await response.json()) as { linkToken: string }), purchase };
  }

  const start = (body: unknown) =>
    fetch(`${pair.baseUrl}/verifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: pair.origin },
      body: JSON.stringify(body),
    });

  /** The request the provider received for a consumerUrl. */
  const upstreamRequestOf = (consumerUrl: string) =>
    pair.provider.state.verifications.get(new URL(consumerUrl).pathname.split('/').pop()!)?.request;

  test('POST /link-sessions answers 201 with an opaque link token (192 random bits) and its expiry, 30 minutes by default', async () => {
    clock = Date.now();
    const response = await createLinkSession(checkout());
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const body = (await response.json()) as { linkToken: string; expiresAt: string };
    assert.match(body.linkToken, /^lt_[A-Za-z0-9_-]{32}$/);
    assert.equal(Date.parse(body.expiresAt), clock + 30 * 60_000);
    assert.deepEqual(Object.keys(body).sort(), ['expiresAt', 'linkToken']);
    const other = (await (await createLinkSession(checkout())).json()) as { linkToken: string };
    assert.notEqual(other.linkToken, body.linkToken);
  });

  test('POST /link-sessions needs the merchant API key: the page cannot make one', async () => {
    assert.equal((await createLinkSession(checkout(), '')).status, 401);
    assert.equal((await createLinkSession(checkout(), 'Bearer wrong-key-wrong-key-wrong-key')).status, 401);
  });

  test('refuses a link session with a missing, invalid or unknown field (400 naming each)', async () => {
    const { amount: _amount, ...noAmount } = checkout();
    const response = await createLinkSession({
      ...noAmount,
      currency: 'usd',
      consumer: { firstName: 'Ana', lastName: '', email: 'nope' },
      accountToken: 'acct_x',
      language: `es-${'a1b2c3d4-'.repeat(5)}x1`,
    });
    assert.equal(response.status, 400);
    const paths = (await problemOf(response)).errors?.map((e) => e.path).sort();
    assert.deepEqual(paths, ['accountToken', 'amount', 'consumer.email', 'consumer.lastName', 'currency', 'language']);
  });

  test('refuses a blank consumer field, a three-decimal amount and a malformed language (400 naming each): a field is sent non-empty or not at all', async () => {
    const response = await createLinkSession(
      checkout({ amount: '12.345', language: '!!', consumer: { firstName: 'Ana', lastName: ' ', email: '' } }),
    );
    assert.equal(response.status, 400);
    assert.deepEqual((await problemOf(response)).errors?.map((e) => e.path).sort(), [
      'amount',
      'consumer.email',
      'consumer.lastName',
      'language',
    ]);
  });

  test("a start with the link token alone sends the link session's values upstream", async () => {
    clock = Date.now();
    const { linkToken, purchase } = await newLinkSession();
    const response = await start({ linkToken });
    assert.equal(response.status, 201);
    const { consumerUrl } = (await response.json()) as { consumerUrl: string };
    const request = upstreamRequestOf(consumerUrl) as unknown as Record<string, Record<string, unknown>>;
    assert.equal(request.merchant?.merchantUserId, purchase.merchantUserId);
    assert.equal(request.merchant?.merchantTransactionId, purchase.merchantTransactionId);
    assert.equal(request.transaction?.amount, purchase.amount);
    assert.equal(request.transaction?.currency, 'USD');
    assert.equal(request.transaction?.language, 'es-US');
    assert.deepEqual(request.consumer, purchase.consumer);
  });

  test('a page that sends another amount, user or language beside the link token is refused (400 naming each) and nothing reaches the provider', async () => {
    clock = Date.now();
    const { linkToken } = await newLinkSession();
    const before = pair.provider.stats.verificationRequests;
    const response = await start({
      linkToken,
      amount: '0.01',
      merchantUserId: 'attacker',
      consumer: { email: 'attacker@example.com' },
      language: 'en',
    });
    assert.equal(response.status, 400);
    const errors = (await problemOf(response)).errors ?? [];
    assert.deepEqual(errors.map((e) => e.path).sort(), ['amount', 'consumer', 'language', 'merchantUserId']);
    for (const error of errors) assert.match(error.message, /the link session sets it/, error.path);
    assert.equal(pair.provider.stats.verificationRequests, before);
  });

  test('in sandbox mode too, a start that names the purchase itself is refused (400 naming each field: the link session sets it)', async () => {
    const before = pair.provider.stats.verificationRequests;
    const { consumer, ...rest } = checkout({ dataPassThrough: 'cart-7' });
    for (const body of [
      { ...rest, consumer },
      { linkToken: (await newLinkSession()).linkToken, ...rest, consumer },
    ]) {
      const response = await start(body);
      assert.equal(response.status, 400);
      const problem = await problemOf(response);
      assert.equal(problem.type, 'urn:obv-link:problem:validation');
      const named = problem.errors?.filter((e) => e.path !== 'language') ?? [];
      assert.deepEqual(named.map((e) => e.path).sort(), [
        'amount',
        'consumer',
        'currency',
        'dataPassThrough',
        'merchantTransactionId',
        'merchantUserId',
      ]);
      for (const error of named)
        assert.equal(error.message, 'must not be sent: the link session sets it (POST /link-sessions on your server)');
    }
    assert.equal(pair.provider.stats.verificationRequests, before);
  });

  test('in sandbox mode too, a start without a link token (and without an enrichStart hook) is refused: 400 link-session-required naming linkToken', async () => {
    const before = pair.provider.stats.verificationRequests;
    for (const body of [
      {},
      { language: 'es-US' },
      { language: 'en', linkRef: 'lr_from-an-old-page', accountToken: 'acct-from-the-page' },
    ]) {
      const response = await start(body);
      assert.equal(response.status, 400, JSON.stringify(body));
      const problem = await problemOf(response);
      assert.equal(problem.type, 'urn:obv-link:problem:link-session-required');
      assert.deepEqual(
        problem.errors?.map((e) => e.path),
        ['linkToken'],
      );
    }
    assert.equal(pair.provider.stats.verificationRequests, before);
  });

  test('refuses an unknown (404), expired (410) or used (409: its order is paid) link token, naming linkToken, without calling the provider', async () => {
    clock = Date.now();
    const before = pair.provider.stats.verificationRequests;
    const unknown = await start({ linkToken: `lt_${'A'.repeat(32)}` });
    assert.equal(unknown.status, 404);
    assert.deepEqual(
      (await problemOf(unknown)).errors?.map((e) => e.path),
      ['linkToken'],
    );

    const { linkToken: stale } = await newLinkSession();
    clock += 30 * 60_000;
    const expired = await start({ linkToken: stale });
    assert.equal(expired.status, 410);
    assert.equal((await problemOf(expired)).type, 'urn:obv-link:problem:link-token-expired');
    assert.equal(pair.provider.stats.verificationRequests, before);

    clock = Date.now();
    const { linkToken: once, purchase } = await newLinkSession();
    const first = (await (await start({ linkToken: once })).json()) as { sessionId: string; consumerUrl: string };
    await completeConsumerStep(first.consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    // Linked but not paid: the shopper may still "Change" the account with the same token.
    const change = (await (await start({ linkToken: once })).json()) as { consumerUrl: string };
    assert.ok(change.consumerUrl, 'a second start before payment (Change) is allowed');
    const view = (await (await lookupSession(pair.baseUrl, first.sessionId)).json()) as {
      outcome: { linkRef: string };
    };
    const paid = await fetch(`${pair.baseUrl}/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body: JSON.stringify({
        linkRef: view.outcome.linkRef,
        merchantUserId: purchase.merchantUserId,
        merchantTransactionId: purchase.merchantTransactionId,
        amount: purchase.amount,
        currency: 'USD',
      }),
    });
    assert.equal(paid.status, 201);
    const afterPayment = pair.provider.stats.verificationRequests;
    const reused = await start({ linkToken: once });
    assert.equal(reused.status, 409);
    assert.equal((await problemOf(reused)).type, 'urn:obv-link:problem:link-token-used');
    assert.equal(pair.provider.stats.verificationRequests, afterPayment);
  });

  test('a link token survives a failed bank step: the shopper may try again until an account is linked', async () => {
    clock = Date.now();
    const { linkToken } = await newLinkSession();
    const first = (await (await start({ linkToken })).json()) as { consumerUrl: string };
    await completeConsumerStep(first.consumerUrl, 'notVerified');
    await pair.provider.notificationsSettled();
    assert.equal((await start({ linkToken })).status, 201);
  });

  test("the link reference of a link-token start pays exactly the link session's order and amount", async () => {
    clock = Date.now();
    const { linkToken, purchase } = await newLinkSession();
    const { sessionId, consumerUrl } = (await (await start({ linkToken })).json()) as {
      sessionId: string;
      consumerUrl: string;
    };
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const session = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { outcome: { linkRef: string } };
    const pay = (extra: Record<string, string> = {}) =>
      fetch(`${pair.baseUrl}/transactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: AUTH },
        body: JSON.stringify({
          linkRef: session.outcome.linkRef,
          merchantUserId: purchase.merchantUserId,
          merchantTransactionId: purchase.merchantTransactionId,
          amount: purchase.amount,
          currency: 'USD',
          ...extra,
        }),
      });
    assert.equal((await pay({ amount: '0.01' })).status, 422);
    assert.equal((await pay()).status, 201);
  });

  test('proxy.createLinkSession does the same in-process, and names a bad field', async () => {
    clock = Date.now();
    const created = await pair.proxy.createLinkSession(checkout());
    assert.match(created.linkToken, /^lt_/);
    assert.equal((await start({ linkToken: created.linkToken })).status, 201);
    await assert.rejects(
      pair.proxy.createLinkSession({ ...checkout(), amount: '-1' }),
      (error: Error & { status?: number; errors?: { path: string }[] }) => {
        assert.equal(error.status, 400);
        assert.deepEqual(
          error.errors?.map((e) => e.path),
          ['amount'],
        );
        return true;
      },
    );
  });
});

describe('outside sandbox mode', () => {
  test('a start without a link token is refused (400 naming linkToken and the fix); a link token is accepted', async (t) => {
    // Production guardrails need https URLs: the provider is never reached in the refused case, and the
    // accepted case is told apart by getting past the check to the (unreachable) provider.
    const proxy = await startProxy({
      providerUrl: 'https://127.0.0.1:9',
      proxy: {
        sandbox: false,
        publicUrl: 'https://shop.example',
        allowedOrigins: [],
        clientId: 'production-client',
        clientSecret: 'production-client-secret',
        webhookSecret: `whsec_${Buffer.from('production-webhook-key-0123456789').toString('base64')}`,
        merchantApiKey: 'production-api-key-0123456789-abcdefghijklmnop',
        sealingKeys: 'k1:dux0ek/rqEzDBV9T2T/zc3W7us82yMS7iNmiqbwxckk=',
        upstreamTimeoutMs: 1_000,
      },
    });
    t.after(() => proxy.close());
    const start = (body: unknown) =>
      fetch(`${proxy.baseUrl}/verifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'https://shop.example' },
        body: JSON.stringify(body),
      });
    const refused = await start({ language: 'en' });
    assert.equal(refused.status, 400);
    const problem = await problemOf(refused);
    assert.equal(problem.type, 'urn:obv-link:problem:link-session-required');
    assert.deepEqual(
      problem.errors?.map((e) => e.path),
      ['linkToken'],
    );

    const { linkToken } = await proxy.proxy.createLinkSession(checkout());
    const accepted = await start({ linkToken });
    assert.ok(accepted.status >= 500, `past the check, the unreachable provider answers: ${accepted.status}`);
  });
});
