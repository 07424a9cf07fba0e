// POST /transactions and GET /links/:linkRef — the merchant server redeems the link reference the page
// holds; the proxy looks the accountToken up itself, and only for the user, order and amount it was
// verified for, once.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { START_BODY, startProxy, startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

const AUTH = `Bearer ${TEST_MERCHANT_API_KEY}`;

describe('transactions', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair();
  });
  after(() => pair.close());

  /** Links an account for `order` (default START_BODY's) and returns the reference the browser got. */
  async function verifiedLinkRef(order: Partial<typeof START_BODY> = {}): Promise<string> {
    const { sessionId, consumerUrl } = await pair.startVerification({ ...START_BODY, ...order });
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const session = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { outcome: Record<string, string> };
    assert.equal(session.outcome.accountToken, undefined, 'the browser\'s view of a session carries no accountToken');
    return session.outcome.linkRef!;
  }

  function submit(body: unknown, authorization?: string) {
    return fetch(`${pair.baseUrl}/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(body),
    });
  }

  const payment = (linkRef: string, extra: Record<string, string> = {}) =>
    ({ linkRef, merchantUserId: START_BODY.merchantUserId, merchantTransactionId: START_BODY.merchantTransactionId, amount: START_BODY.amount, ...extra });

  async function problemOf(response: Response): Promise<{ type: string; errors?: { path: string }[] }> {
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    return (await response.json()) as { type: string; errors?: { path: string }[] };
  }

  test('redeems a link reference: the provider is charged with the stored accountToken', async () => {
    const linkRef = await verifiedLinkRef();
    const response = await submit(payment(linkRef), AUTH);
    assert.equal(response.status, 201);
    const body = (await response.json()) as Record<string, string>;
    assert.equal(body.transactionStatus, 'APPROVED');
    assert.equal(body.merchantTransactionId, START_BODY.merchantTransactionId);
    const stored = pair.provider.state.transactions.get(body.transactionId!);
    assert.ok(stored?.accountToken && pair.provider.state.accounts.has(stored.accountToken));
    assert.notEqual(stored.accountToken, linkRef);
  });

  test('a reference that paid once cannot pay again, not even for the same order', async () => {
    const linkRef = await verifiedLinkRef();
    assert.equal((await submit(payment(linkRef), AUTH)).status, 201);
    const before = pair.provider.stats.transactions;
    const again = await submit(payment(linkRef), AUTH);
    assert.equal(again.status, 409);
    assert.equal((await problemOf(again)).type, 'urn:obv-link:problem:link-ref-used');
    assert.equal(pair.provider.stats.transactions, before);
  });

  test('two concurrent payments with one reference: exactly one is charged', async () => {
    const linkRef = await verifiedLinkRef();
    const before = pair.provider.stats.transactions;
    const statuses = (await Promise.all(Array.from({ length: 5 }, () => submit(payment(linkRef), AUTH)))).map((r) => r.status);
    assert.deepEqual(statuses.sort(), [201, 409, 409, 409, 409]);
    assert.equal(pair.provider.stats.transactions, before + 1);
  });

  test('refuses a reference replayed for another order, another user or another amount (422 naming the field)', async () => {
    const linkRef = await verifiedLinkRef();
    const before = pair.provider.stats.transactions;
    for (const [field, value] of [['merchantTransactionId', 'order-other'], ['merchantUserId', 'user-other'], ['amount', '999.00']] as const) {
      const response = await submit(payment(linkRef, { [field]: value }), AUTH);
      assert.equal(response.status, 422, field);
      const problem = await problemOf(response);
      assert.equal(problem.type, 'urn:obv-link:problem:link-ref-mismatch');
      assert.deepEqual(problem.errors?.map((e) => e.path), [field]);
    }
    assert.equal(pair.provider.stats.transactions, before);
    // Refusals do not use the reference up: the right order still pays.
    assert.equal((await submit(payment(linkRef), AUTH)).status, 201);
  });

  test('refuses an unknown link reference with 404 naming linkRef', async () => {
    const response = await submit(payment('AAAAAAAAAAAAAAAAAAAAAA'), AUTH);
    assert.equal(response.status, 404);
    assert.deepEqual((await problemOf(response)).errors?.map((e) => e.path), ['linkRef']);
  });

  test('refuses an accountToken in place of a reference: the route takes references only', async () => {
    const linkRef = await verifiedLinkRef();
    const token = (await (await fetch(`${pair.baseUrl}/links/${linkRef}`, { headers: { authorization: AUTH } })).json()) as { accountToken: string };
    const response = await submit({ ...payment(linkRef), linkRef: token.accountToken }, AUTH);
    assert.ok(response.status === 400 || response.status === 404, `status ${response.status}`);
  });

  test('GET /links/:linkRef gives the merchant server the verified account, token included, and what it paid', async () => {
    const linkRef = await verifiedLinkRef();
    const read = async () => (await (await fetch(`${pair.baseUrl}/links/${linkRef}`, { headers: { authorization: AUTH } })).json()) as Record<string, unknown>;
    const account = await read();
    assert.ok(pair.provider.state.accounts.has(String(account.accountToken)));
    assert.equal(account.linkRef, linkRef);
    assert.equal(account.accountLabel, 'Checking ••••4321');
    assert.equal(account.merchantUserId, START_BODY.merchantUserId);
    assert.equal(account.merchantTransactionId, START_BODY.merchantTransactionId);
    assert.equal(account.amount, START_BODY.amount);
    assert.equal(account.redeemedFor, undefined);
    await submit(payment(linkRef), AUTH);
    assert.equal((await read()).redeemedFor, START_BODY.merchantTransactionId);
  });

  test('GET /links/:linkRef needs the merchant API key', async () => {
    const linkRef = await verifiedLinkRef();
    const response = await fetch(`${pair.baseUrl}/links/${linkRef}`);
    assert.equal(response.status, 401);
    assert.ok(!(await response.text()).includes('accountToken'));
  });

  test('refuses a call without the merchant API key', async () => {
    const before = pair.provider.stats.transactions;
    const response = await submit(payment('AAAAAAAAAAAAAAAAAAAAAA'));
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(pair.provider.stats.transactions, before);
  });

  test('refuses a wrong merchant API key', async () => {
    const response = await submit(payment('AAAAAAAAAAAAAAAAAAAAAA'), `${AUTH}x`);
    assert.equal(response.status, 401);
  });

  test('passes the provider\'s refusal through and lets the reference be tried again', async () => {
    const linkRef = await verifiedLinkRef();
    pair.provider.state.accounts.clear();
    const refused = await submit(payment(linkRef), AUTH);
    assert.equal(refused.status, 422);
    assert.equal((await refused.json() as { errors: { path: string }[] }).errors[0]?.path, 'accountToken');
    const redeemed = (await (await fetch(`${pair.baseUrl}/links/${linkRef}`, { headers: { authorization: AUTH } })).json()) as Record<string, unknown>;
    assert.equal(redeemed.redeemedFor, undefined);
  });

  test('names missing fields in a 400', async () => {
    const response = await submit({ merchantTransactionId: '' }, AUTH);
    assert.equal(response.status, 400);
    const body = (await response.json()) as { errors: { path: string }[] };
    assert.deepEqual(body.errors.map((e) => e.path).sort(), ['linkRef', 'merchantTransactionId', 'merchantUserId']);
  });

  test('has no transactions or links route when OBV_MERCHANT_API_KEY is not set', async (t) => {
    const bare = await startProxy({ providerUrl: pair.provider.url, proxy: { merchantApiKey: undefined } });
    t.after(() => bare.close());
    const response = await fetch(`${bare.baseUrl}/transactions`, { method: 'POST', headers: { authorization: 'Bearer anything' } });
    assert.equal(response.status, 404);
    assert.equal((await fetch(`${bare.baseUrl}/links/AAAAAAAAAAAAAAAAAAAAAA`, { headers: { authorization: 'Bearer anything' } })).status, 404);
  });

  test('a 5xx from the gateway may have charged: the reference stays used and is not sent twice', async (t) => {
    let charges = 0;
    const gateway = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        charges += 1;
        res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"upstream hiccup"}');
      });
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => gateway.close(() => resolve())));
    const flaky = await startProxy({
      providerUrl: pair.provider.url,
      proxy: { gatewayUrl: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`, sessionStore: pair.store, resultBus: pair.bus },
    });
    t.after(() => flaky.close());
    const linkRef = await verifiedLinkRef();
    const pay = () => fetch(`${flaky.baseUrl}/transactions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: AUTH }, body: JSON.stringify(payment(linkRef)),
    });
    assert.equal((await pay()).status, 502);
    const again = await pay();
    assert.equal(again.status, 409);
    assert.equal(charges, 1, 'the gateway saw one charge');
  });
});
