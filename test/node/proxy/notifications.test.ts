// POST /notifications/:ref — signature checks, lenient parsing, first outcome wins, unknown refs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { startProxyPair, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { connectRelay } from '../../helpers/relay-client.ts';
import { failurePayload, postNotification, signNotification, successPayload } from '../../helpers/webhooks.ts';

describe('notification intake', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair();
  });
  after(() => pair.close());

  /** Starts a session and returns its id and the notification URL the proxy handed the provider. */
  async function sessionWithNotificationUrl() {
    const { sessionId } = await pair.startVerification();
    return { sessionId, url: await pair.notificationUrl(sessionId) };
  }

  async function state(sessionId: string) {
    const response = await fetch(`${pair.baseUrl}/sessions/${sessionId}`);
    return (await response.json()) as { state: string; outcome?: Record<string, string> };
  }

  test('stores a signed success and answers 200', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    const response = await postNotification(url, successPayload('acct-1'));
    assert.equal(response.status, 200);
    const session = await state(sessionId);
    assert.equal(session.state, 'succeeded');
    assert.equal(session.outcome?.accountToken, 'acct-1');
  });

  test('rejects a notification whose signature does not match', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    const response = await postNotification(url, successPayload(), { secret: 'whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==' });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal((await state(sessionId)).state, 'pending');
  });

  test('rejects a notification without signature headers', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(successPayload()) });
    assert.equal(response.status, 401);
    assert.match(((await response.json()) as { detail: string }).detail, /Missing required headers/);
    assert.equal((await state(sessionId)).state, 'pending');
  });

  test('rejects a notification signed more than five minutes ago', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    const response = await postNotification(url, successPayload(), { timestamp: new Date(Date.now() - 6 * 60_000) });
    assert.equal(response.status, 401);
    assert.match(((await response.json()) as { detail: string }).detail, /too old/);
    assert.equal((await state(sessionId)).state, 'pending');
  });

  test('rejects a body changed after signing', async () => {
    const { url } = await sessionWithNotificationUrl();
    const signed = signNotification(successPayload('acct-real'));
    const response = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body.replace('acct-real', 'acct-fake') });
    assert.equal(response.status, 401);
  });

  test('answers 404 for a correctly signed notification to an unknown reference, and logs it', async () => {
    const response = await postNotification(`${pair.baseUrl}/notifications/AAAAAAAAAAAAAAAAAAAAAA`, successPayload());
    assert.equal(response.status, 404);
    assert.ok(pair.logs.find('notification for an unknown session reference').length > 0);
  });

  test('refuses a signed notification addressed by the session id instead of its notification reference', async () => {
    // The browser knows its session id; only the provider knows the reference. A page must not be able to
    // post an outcome for its own (or any) session even with a replayed signed body.
    const { sessionId } = await sessionWithNotificationUrl();
    const response = await postNotification(`${pair.baseUrl}/notifications/${sessionId}`, successPayload('acct-forged'));
    assert.equal(response.status, 404);
    assert.equal((await state(sessionId)).state, 'pending');
  });

  test('keeps the first outcome when a later, different one arrives', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    assert.equal((await postNotification(url, failurePayload('ACCOUNT_LOCKED', 'locked'))).status, 200);
    const later = await postNotification(url, successPayload('acct-late'));
    assert.equal(later.status, 200);
    assert.deepEqual(await later.json(), { status: 'ignored' });
    const session = await state(sessionId);
    assert.deepEqual(session.outcome, { status: 'failure', code: 'ACCOUNT_LOCKED', message: 'locked' });
  });

  test('acknowledges a duplicate delivery (same webhook-id) as ignored and the socket still gets one result', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId });
    await client.next((message) => message.type === 'subscribed');
    const payload = successPayload('acct-dup');
    const first = await postNotification(url, payload, { id: 'msg_dup_1' });
    const second = await postNotification(url, payload, { id: 'msg_dup_1' });
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    assert.deepEqual(await second.json(), { status: 'ignored' });
    await client.closed;
    assert.equal(client.messages.filter((message) => message.type === 'result').length, 1);
  });

  test('sends one result even when the sandbox delivers a notification twice', async () => {
    pair.provider.faults.duplicateNotifications = 1;
    const { sessionId, consumerUrl } = await pair.startVerification();
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId });
    await client.next((message) => message.type === 'subscribed');
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    await client.closed;
    assert.equal(pair.provider.faults.duplicateNotifications, 0, 'the duplicate fault fired');
    assert.equal(client.messages.filter((message) => message.type === 'result').length, 1);
  });

  test('still gets the outcome after the sandbox dropped the first deliveries', async () => {
    pair.provider.faults.dropNotifications = 2;
    const { sessionId, consumerUrl } = await pair.startVerification();
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    assert.equal((await state(sessionId)).state, 'succeeded');
  });

  test('accepts the account fields at the top level and error.code/error.message', async () => {
    const a = await sessionWithNotificationUrl();
    await postNotification(a.url, { verificationStatus: 'SUCCESS', accountToken: 'acct-top', accountLabel: 'L', fiName: 'F', fiAccountType: 'SAVINGS' });
    assert.deepEqual((await state(a.sessionId)).outcome, { status: 'success', accountToken: 'acct-top', accountLabel: 'L', fiName: 'F', fiAccountType: 'SAVINGS' });
    const b = await sessionWithNotificationUrl();
    await postNotification(b.url, { verificationStatus: 'FAILED', error: { code: 'E1', message: 'nope' } });
    assert.deepEqual((await state(b.sessionId)).outcome, { status: 'failure', code: 'E1', message: 'nope' });
  });

  test('answers 400 naming the fields when a notification carries neither token nor error', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    const response = await postNotification(url, { verificationStatus: 'SUCCESS', account: {} });
    assert.equal(response.status, 400);
    const problem = (await response.json()) as { errors: { path: string }[] };
    assert.deepEqual(problem.errors.map((e) => e.path), ['account.accountToken', 'errorCode']);
    assert.equal((await state(sessionId)).state, 'pending');
  });

  test('answers 400 for a signed body that is not JSON', async () => {
    const { url } = await sessionWithNotificationUrl();
    const response = await postNotification(url, 'not json at all');
    assert.equal(response.status, 400);
  });

  test('answers 413 for an oversize notification', async () => {
    const { url } = await sessionWithNotificationUrl();
    const response = await postNotification(url, { ...successPayload(), padding: 'x'.repeat(70_000) });
    assert.equal(response.status, 413);
  });
});
