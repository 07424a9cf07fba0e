// The amount rule at the proxy (contracts/amount.ts): the merchant's server's POST /link-sessions and a
// sandbox page's POST /verifications accept exactly the same amounts, row by row.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ACCEPTED_AMOUNTS, REFUSED_AMOUNTS } from '../../contracts/amount-cases.ts';
import { PURCHASE, startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair } from '../../helpers/proxy-harness.ts';

async function start(base: string, amount: string) {
  const response = await fetch(`${base}/verifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...PURCHASE, amount }),
  });
  return { status: response.status, body: (await response.json()) as { errors?: { path: string }[] } };
}

async function linkSession(base: string, amount: string) {
  const { merchantUserId, merchantTransactionId, currency, consumer } = PURCHASE;
  const response = await fetch(`${base}/link-sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
    body: JSON.stringify({ merchantUserId, merchantTransactionId: `${merchantTransactionId}-${amount}`, amount, currency, consumer }),
  });
  return { status: response.status, body: (await response.json()) as { errors?: { path: string }[] } };
}

describe('the amount rule at the proxy (POST /link-sessions, POST /verifications)', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair();
  });
  after(() => pair.close());

  for (const amount of ACCEPTED_AMOUNTS) {
    test(`accepts ${JSON.stringify(amount)}`, async () => {
      assert.equal((await linkSession(pair.baseUrl, amount)).status, 201, 'POST /link-sessions');
      assert.equal((await start(pair.baseUrl, amount)).status, 201, 'POST /verifications');
    });
  }

  for (const amount of REFUSED_AMOUNTS) {
    test(`refuses ${JSON.stringify(amount)} with a 400 naming amount`, async () => {
      for (const [route, answer] of [['POST /link-sessions', await linkSession(pair.baseUrl, amount)], ['POST /verifications', await start(pair.baseUrl, amount)]] as const) {
        assert.equal(answer.status, 400, route);
        assert.deepEqual(answer.body.errors?.map((error) => error.path), ['amount'], route);
      }
    });
  }
});
