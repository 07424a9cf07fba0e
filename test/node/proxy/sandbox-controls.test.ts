// The sandbox controls (POST /sandbox/controls/…) seen through the real proxy: each control set over HTTP, as
// `npx obv-link-sandbox <control>` does, and what the proxy then makes of it for the shopper and the merchant.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { PURCHASE, startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { connectRelay } from '../../helpers/relay-client.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

const SANDBOX_BASIC = `Basic ${Buffer.from('sandbox_client:sandbox_secret').toString('base64')}`;

describe('sandbox controls through the proxy', () => {
  let pair: ProxyPair;
  before(async () => {
    // A short upstream time-out, so a timed-out endpoint is given up on quickly.
    pair = await startProxyPair({ proxy: { upstreamTimeoutMs: 1_000 } });
  });
  after(() => pair.close());

  async function control(name: string, body: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const response = await fetch(`${pair.provider.url}/sandbox/controls/${name}`, {
      method: 'POST',
      headers: { authorization: SANDBOX_BASIC, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    assert.equal(response.status, 200, JSON.stringify(answer));
    return answer;
  }

  const view = async (sessionId: string) =>
    (await (await lookupSession(pair.baseUrl, sessionId)).json()) as {
      state: string;
      outcome?: Record<string, string>;
    };

  /** A verification the consumer finishes as `user_good`; resolves with the session's final view. */
  async function linkAsGoodConsumer(merchantTransactionId = `order-${Math.random().toString(36).slice(2)}`) {
    const { sessionId, consumerUrl } = await pair.startVerification({ merchantTransactionId });
    assert.equal((await completeConsumerStep(consumerUrl, 'good')).status, 303);
    await pair.provider.notificationsSettled();
    return { sessionId, merchantTransactionId, ...(await view(sessionId)) };
  }

  const pay = (linkRef: string, merchantTransactionId: string) =>
    fetch(`${pair.baseUrl}/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
      body: JSON.stringify({
        linkRef,
        merchantUserId: PURCHASE.merchantUserId,
        merchantTransactionId,
        amount: PURCHASE.amount,
        currency: PURCHASE.currency,
      }),
    });

  test("fail-next: the next verification fails with the chosen code whoever signs in, in the proxy's words; the one after succeeds", async () => {
    await control('fail-next', { errorCode: 'ACCOUNT_LOCKED' });
    const failed = await linkAsGoodConsumer();
    assert.equal(failed.state, 'failed');
    assert.equal(failed.outcome?.code, 'ACCOUNT_LOCKED');
    assert.match(failed.outcome?.text ?? '', /locked at your bank/);
    assert.equal((await linkAsGoodConsumer()).state, 'succeeded', 'the control fires once');

    // A code the proxy has no words for keeps its code and gets the general words.
    await control('fail-next', { errorCode: 'BANK_UNAVAILABLE', errorMessage: 'The bank is down.' });
    const unknown = await linkAsGoodConsumer();
    assert.equal(unknown.outcome?.code, 'BANK_UNAVAILABLE');
    assert.match(unknown.outcome?.text ?? '', /couldn’t link this account/);
  });

  test('notify-twice: the notification arrives twice with one webhook-id, and the shopper gets one result', async () => {
    await control('notify-twice');
    const { sessionId, consumerUrl } = await pair.startVerification();
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId });
    await client.next((message) => message.type === 'subscribed');
    const duplicatesBefore = pair.provider.stats.notificationDuplicates;
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    await client.closed;
    assert.equal(pair.provider.stats.notificationDuplicates, duplicatesBefore + 1, 'the copy was sent');
    assert.equal(client.messages.filter((message) => message.type === 'result').length, 1);
    assert.equal((await view(sessionId)).state, 'succeeded');
  });

  test('notify-late: the notification waits, the session stays pending meanwhile, and the outcome still arrives', async () => {
    await control('notify-late', { ms: 2_000 });
    const { sessionId, consumerUrl } = await pair.startVerification();
    const attemptsBefore = pair.provider.stats.notificationAttempts;
    await completeConsumerStep(consumerUrl, 'good');
    assert.equal((await view(sessionId)).state, 'pending', 'nothing delivered yet');
    assert.equal(pair.provider.stats.notificationAttempts, attemptsBefore);
    await pair.provider.notificationsSettled();
    assert.equal((await view(sessionId)).state, 'succeeded');
  });

  test('timeout on endpoint 4: the proxy gives up (504) and the payment is unknown, not paid again; reset frees the sandbox', async () => {
    const linked = await linkAsGoodConsumer();
    await control('timeout', { endpoint: 'transaction' });
    const timedOut = await pay(linked.outcome!.linkRef!, linked.merchantTransactionId);
    assert.equal(timedOut.status, 504, await timedOut.clone().text());
    const record = (await (
      await fetch(`${pair.baseUrl}/transactions/${linked.merchantTransactionId}`, {
        headers: { authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
      })
    ).json()) as { state: string };
    assert.equal(record.state, 'unknown');
    const again = await pay(linked.outcome!.linkRef!, linked.merchantTransactionId);
    assert.equal(again.status, 409, 'an unknown payment is reconciled, never sent again');
    const status = (await control('reset')).controls as { timeouts: { transaction: number } };
    assert.equal(status.timeouts.transaction, 0);
  });

  test('timeout on endpoint 2: starting a verification fails (504) once, the next start works', async () => {
    await control('timeout', { endpoint: 'verification' });
    const linkToken = await pair.createLinkSession();
    const refused = await fetch(`${pair.baseUrl}/verifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: pair.origin },
      body: JSON.stringify({ linkToken }),
    });
    assert.equal(refused.status, 504, await refused.clone().text());
    await pair.startVerification();
  });

  test('delay on endpoint 4: the payment waits at least that long and completes', async () => {
    const linked = await linkAsGoodConsumer();
    await control('delay', { endpoint: 'transaction', ms: 400 });
    const started = Date.now();
    const paid = await pay(linked.outcome!.linkRef!, linked.merchantTransactionId);
    assert.ok(Date.now() - started >= 400, 'the answer waited for the delay');
    assert.equal(paid.status, 201, await paid.clone().text());
    await control('delay', { endpoint: 'transaction', ms: 0 });
  });

  test('stale by test consumer: the linked account is refused with reauthorization-required until re-verified', async () => {
    const linked = await linkAsGoodConsumer();
    const answer = await control('stale', { consumer: 'user_good' });
    assert.ok((answer.marked as number) >= 1);
    const refused = await pay(linked.outcome!.linkRef!, linked.merchantTransactionId);
    assert.equal(refused.status, 422, await refused.clone().text());
    const problem = (await refused.json()) as { type: string; providerCode: string };
    assert.equal(problem.type, 'urn:obv-link:problem:reauthorization-required');
    assert.equal(problem.providerCode, 'REAUTHORIZATION_REQUIRED');
    await control('reset');
  });
});
