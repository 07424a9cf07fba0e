// The amount rule at the proxy: POST /verifications accepts exactly the amounts the element accepts
// (test/browser/amount-contract.test.ts runs the same table through the element).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ACCEPTED_AMOUNTS, REFUSED_AMOUNTS } from '../../contracts/amount-cases.ts';
import { START_BODY, startProxyPair, type ProxyPair } from '../../helpers/proxy-harness.ts';

async function start(base: string, amount: string) {
  const response = await fetch(`${base}/verifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...START_BODY, amount }),
  });
  return { status: response.status, body: (await response.json()) as { errors?: { path: string }[] } };
}

describe('the amount rule at the proxy (POST /verifications)', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair();
  });
  after(() => pair.close());

  for (const amount of ACCEPTED_AMOUNTS) {
    test(`accepts ${JSON.stringify(amount)}`, async () => {
      const { status } = await start(pair.baseUrl, amount);
      assert.equal(status, 201);
    });
  }

  for (const amount of REFUSED_AMOUNTS) {
    test(`refuses ${JSON.stringify(amount)} with a 400 naming amount`, async () => {
      const { status, body } = await start(pair.baseUrl, amount);
      assert.equal(status, 400);
      assert.deepEqual(body.errors?.map((error) => error.path), ['amount']);
    });
  }
});
