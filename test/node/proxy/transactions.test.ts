// POST /transactions — the merchant server's follow-on call with the verified accountToken.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { startProxy, startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair } from '../../helpers/proxy-harness.ts';

describe('transactions', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair();
  });
  after(() => pair.close());

  async function verifiedAccountToken(): Promise<string> {
    const { sessionId, consumerUrl } = await pair.startVerification();
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const session = (await (await fetch(`${pair.baseUrl}/sessions/${sessionId}`)).json()) as { outcome: { accountToken: string } };
    return session.outcome.accountToken;
  }

  function submit(body: unknown, authorization?: string) {
    return fetch(`${pair.baseUrl}/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(body),
    });
  }

  test('submits the interactive transaction and passes the provider\'s 201 through', async () => {
    const accountToken = await verifiedAccountToken();
    const response = await submit({ accountToken, merchantTransactionId: 'order-77', merchantUserId: 'user-42' }, `Bearer ${TEST_MERCHANT_API_KEY}`);
    assert.equal(response.status, 201);
    const body = (await response.json()) as Record<string, string>;
    assert.equal(body.transactionStatus, 'APPROVED');
    assert.equal(body.merchantTransactionId, 'order-77');
    assert.match(body.transactionId!, /^txn_/);
    const stored = pair.provider.state.transactions.get(body.transactionId!);
    assert.equal(stored?.accountToken, accountToken);
  });

  test('refuses a call without the merchant API key', async () => {
    const before = pair.provider.stats.transactions;
    const response = await submit({ accountToken: 'a', merchantTransactionId: 'o' });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(pair.provider.stats.transactions, before);
  });

  test('refuses a wrong merchant API key', async () => {
    const response = await submit({ accountToken: 'a', merchantTransactionId: 'o' }, `Bearer ${TEST_MERCHANT_API_KEY}x`);
    assert.equal(response.status, 401);
  });

  test('passes the provider\'s 422 for an unknown accountToken through', async () => {
    const response = await submit({ accountToken: 'never-issued', merchantTransactionId: 'o-1' }, `Bearer ${TEST_MERCHANT_API_KEY}`);
    assert.equal(response.status, 422);
    const body = (await response.json()) as { errors: { path: string }[] };
    assert.equal(body.errors[0]?.path, 'accountToken');
  });

  test('names missing fields in a 400', async () => {
    const response = await submit({ merchantTransactionId: '' }, `Bearer ${TEST_MERCHANT_API_KEY}`);
    assert.equal(response.status, 400);
    const body = (await response.json()) as { errors: { path: string }[] };
    assert.deepEqual(body.errors.map((e) => e.path).sort(), ['accountToken', 'merchantTransactionId']);
  });

  test('has no transactions route when OBV_MERCHANT_API_KEY is not set', async (t) => {
    const bare = await startProxy({ providerUrl: pair.provider.url, proxy: { merchantApiKey: undefined } });
    t.after(() => bare.close());
    const response = await fetch(`${bare.baseUrl}/transactions`, { method: 'POST', headers: { authorization: 'Bearer anything' } });
    assert.equal(response.status, 404);
  });
});
