import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RunningProvider } from '../../../sandbox/index.ts';
import {
  TRANSACTION_PATH,
  accessToken,
  postJson,
  readProblem,
  startTestProvider,
  startVerification,
  startWebhookReceiver,
  submitConsumerForm,
  verificationBody,
} from './helpers.ts';

const GATEWAY_HEADERS = { 'x-pgw-app-id': 'sandbox-app', 'x-pgw-client-id': 'sandbox_client' };

/** Verifies user_good end to end and returns the accountToken of the notification. */
async function linkAccount(
  provider: RunningProvider,
  receiver: { received: Array<{ body: string }> },
): Promise<string> {
  const { consumerUrl } = await startVerification(provider);
  assert.equal((await submitConsumerForm(consumerUrl, { username: 'user_good', password: 'pass_good' })).status, 303);
  await provider.notificationsSettled();
  const notification = JSON.parse(receiver.received.at(-1)?.body ?? '{}') as { account: { accountToken: string } };
  return notification.account.accountToken;
}

function transactionBody(accountToken: string): Record<string, unknown> {
  return {
    accountToken,
    product: 'OBV',
    countryCode: 'US',
    language: 'en-US',
    originatorIp: '203.0.113.7',
    merchant: { merchantId: 'merchant-1', merchantUserId: 'user-42', merchantTransactionId: 'order-1001' },
  };
}

describe('interactive transaction (endpoint 4)', () => {
  test('approves a transaction on an accountToken it issued: 201 with the merchantTransactionId', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    const accountToken = await linkAccount(provider, receiver);
    const response = await postJson(
      `${provider.url}${TRANSACTION_PATH}`,
      await accessToken(provider),
      transactionBody(accountToken),
      GATEWAY_HEADERS,
    );
    assert.equal(response.status, 201);
    const body = (await response.json()) as Record<string, unknown>;
    assert.match(String(body.transactionId), /^txn_/);
    assert.equal(body.transactionStatus, 'APPROVED');
    assert.equal(body.merchantTransactionId, 'order-1001');
    assert.equal(provider.stats.transactions, 1);
  });

  test('a stale account (the markAccountStale control) is refused with errorCode REAUTHORIZATION_REQUIRED until a verification carrying its token re-links it', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    const accountToken = await linkAccount(provider, receiver);
    assert.equal(provider.markAccountStale('acct_unknown'), false);
    assert.equal(provider.markAccountStale(accountToken), true);
    const pay = async () =>
      postJson(
        `${provider.url}${TRANSACTION_PATH}`,
        await accessToken(provider),
        transactionBody(accountToken),
        GATEWAY_HEADERS,
      );
    const refused = await pay();
    assert.equal(refused.status, 422);
    const body = (await refused.json()) as { errorCode?: string; errors?: Array<{ path: string }> };
    assert.equal(body.errorCode, 'REAUTHORIZATION_REQUIRED');
    assert.deepEqual(
      body.errors?.map((error) => error.path),
      ['accountToken'],
    );
    assert.equal(provider.stats.transactions, 0);
    // Re-authorization: a verification that carries the token, completed at the bank.
    const { consumerUrl } = await startVerification(provider, verificationBody({}, { accountToken }));
    assert.equal((await submitConsumerForm(consumerUrl, { username: 'user_good', password: 'pass_good' })).status, 303);
    await provider.notificationsSettled();
    assert.equal((await pay()).status, 201);
  });

  test('refuses (422 naming accountToken) an accountToken it never issued', async (t) => {
    const provider = await startTestProvider(t);
    const response = await postJson(
      `${provider.url}${TRANSACTION_PATH}`,
      await accessToken(provider),
      transactionBody('acct_forged'),
      GATEWAY_HEADERS,
    );
    assert.equal(response.status, 422);
    assert.deepEqual(
      (await readProblem(response)).errors?.map((error) => error.path),
      ['accountToken'],
    );
    assert.equal(provider.stats.transactions, 0);
  });

  test('answers 401 invalid_token for a missing, unknown or revoked bearer token', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    const accountToken = await linkAccount(provider, receiver);
    const revoked = await accessToken(provider);
    provider.revokeToken(revoked);
    for (const token of [null, 'forged-token', revoked]) {
      const response = await postJson(
        `${provider.url}${TRANSACTION_PATH}`,
        token,
        transactionBody(accountToken),
        GATEWAY_HEADERS,
      );
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    }
    assert.equal(provider.stats.transactions, 0);
  });

  test('answers 400 naming each missing x-pgw header', async (t) => {
    const provider = await startTestProvider(t);
    const token = await accessToken(provider);
    const missingBoth = await postJson(`${provider.url}${TRANSACTION_PATH}`, token, transactionBody('acct_x'));
    assert.equal(missingBoth.status, 400);
    assert.deepEqual(
      (await readProblem(missingBoth)).errors?.map((error) => error.path),
      ['x-pgw-app-id', 'x-pgw-client-id'],
    );
    const emptyClient = await postJson(`${provider.url}${TRANSACTION_PATH}`, token, transactionBody('acct_x'), {
      ...GATEWAY_HEADERS,
      'x-pgw-client-id': ' ',
    });
    assert.deepEqual(
      (await readProblem(emptyClient)).errors?.map((error) => error.path),
      ['x-pgw-client-id'],
    );
  });

  test('answers 400 naming the bad fields of the body', async (t) => {
    const provider = await startTestProvider(t);
    const body = { product: 'OBV', originatorIp: 'somewhere', merchant: { merchantId: 'merchant-1' } };
    const response = await postJson(
      `${provider.url}${TRANSACTION_PATH}`,
      await accessToken(provider),
      body,
      GATEWAY_HEADERS,
    );
    assert.equal(response.status, 400);
    const paths = (await readProblem(response)).errors?.map((error) => error.path).sort();
    assert.deepEqual(paths, ['accountToken', 'merchant.merchantTransactionId', 'originatorIp']);
  });
});
