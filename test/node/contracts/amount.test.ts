// The amount rule at the proxy (contracts/amount.ts): the merchant's server's POST /link-sessions accepts
// exactly these amounts, row by row, and a start with an accepted one's link token sends it upstream (the
// upstream request is checked with the same rule).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ACCEPTED_AMOUNTS, REFUSED_AMOUNTS } from '../../contracts/amount-cases.ts';
import { PURCHASE, startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair } from '../../helpers/proxy-harness.ts';

/** Starts a verification with a link token, as the page does. */
async function start(base: string, linkToken: string) {
  const response = await fetch(`${base}/verifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ linkToken }),
  });
  return { status: response.status, body: (await response.json()) as { errors?: { path: string }[] } };
}

async function linkSession(base: string, amount: string) {
  const { merchantUserId, merchantTransactionId, currency, consumer } = PURCHASE;
  const response = await fetch(`${base}/link-sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
    body: JSON.stringify({
      merchantUserId,
      merchantTransactionId: `${merchantTransactionId}-${amount}`,
      amount,
      currency,
      consumer,
    }),
  });
  return {
    status: response.status,
    body: (await response.json()) as { errors?: { path: string }[]; linkToken?: string },
  };
}

describe('the amount rule at the proxy (POST /link-sessions, and the start it makes)', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair();
  });
  after(() => pair.close());

  for (const amount of ACCEPTED_AMOUNTS) {
    test(`accepts ${JSON.stringify(amount)}`, async () => {
      const created = await linkSession(pair.baseUrl, amount);
      assert.equal(created.status, 201, 'POST /link-sessions');
      assert.equal((await start(pair.baseUrl, created.body.linkToken ?? '')).status, 201, 'POST /verifications');
      const sent = [...pair.provider.state.verifications.values()].find(
        (v) => v.request.merchant.merchantTransactionId === `${PURCHASE.merchantTransactionId}-${amount}`,
      );
      assert.equal(sent?.request.transaction.amount, amount, 'the amount sent upstream');
    });
  }

  for (const amount of REFUSED_AMOUNTS) {
    test(`refuses ${JSON.stringify(amount)} with a 400 naming amount`, async () => {
      const answer = await linkSession(pair.baseUrl, amount);
      assert.equal(answer.status, 400);
      assert.deepEqual(
        answer.body.errors?.map((error) => error.path),
        ['amount'],
      );
    });
  }
});
