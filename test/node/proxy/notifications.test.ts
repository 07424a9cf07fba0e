// POST /notifications/:ref — signature checks, lenient parsing, first outcome wins, unknown refs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { OutcomeReport } from '../../../proxy/index.ts';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { startProxyPair, storedAccountToken, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { connectRelay } from '../../helpers/relay-client.ts';
import { failurePayload, postNotification, signNotification, successPayload } from '../../helpers/webhooks.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

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
    const response = await lookupSession(pair.baseUrl, sessionId);
    return (await response.json()) as { state: string; outcome?: Record<string, string> };
  }

  test('stores a signed success and answers 200', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    const response = await postNotification(url, successPayload('acct-1'));
    assert.equal(response.status, 200);
    const session = await state(sessionId);
    assert.equal(session.state, 'succeeded');
    assert.equal(session.outcome?.accountToken, undefined, 'the browser never reads the token');
    assert.match(session.outcome?.linkRef ?? '', /^[A-Za-z0-9_-]{22}$/);
    const stored = await pair.store.get(sessionId);
    assert.equal(storedAccountToken(pair.proxy, stored), 'acct-1', "stored sealed, and opens to the provider's token");
  });

  test("a success's link reference answers before any page can read the outcome that names it", async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    // What the reference resolved to at the moment the success was stored (a page polling the session
    // may read it from then on, and the merchant's server pay with it at once).
    const seen: (string | undefined)[] = [];
    const settle = pair.store.settle.bind(pair.store);
    pair.store.settle = async (id, outcome) => {
      if (outcome.status === 'success') seen.push(await pair.store.readMark(`link:${outcome.linkRef}`));
      return settle(id, outcome);
    };
    try {
      assert.equal((await postNotification(url, successPayload('acct-early'))).status, 200);
    } finally {
      pair.store.settle = settle;
    }
    assert.deepEqual(seen, [sessionId]);
  });

  test('rejects a notification whose signature does not match', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    const response = await postNotification(url, successPayload(), {
      secret: 'whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==',
    });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal((await state(sessionId)).state, 'pending');
  });

  test('rejects a notification without signature headers', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(successPayload()),
    });
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
    const response = await fetch(url, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body.replace('acct-real', 'acct-fake'),
    });
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
    const response = await postNotification(
      `${pair.baseUrl}/notifications/${sessionId}`,
      successPayload('acct-forged'),
    );
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
    assert.deepEqual(session.outcome, {
      status: 'failure',
      code: 'ACCOUNT_LOCKED',
      message:
        'This account is locked at your bank. Link another account, or choose another way to pay; your bank can unlock this one.',
      text: 'This account is locked at your bank. Link another account, or choose another way to pay; your bank can unlock this one.',
      lang: 'en',
    });
  });

  test('acknowledges a duplicate delivery (same webhook-id) and still sends one result per socket', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId });
    await client.next((message) => message.type === 'subscribed');
    const payload = successPayload('acct-dup');
    const first = await postNotification(url, payload, { id: 'msg_dup_1' });
    const second = await postNotification(url, payload, { id: 'msg_dup_1' });
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    // The same outcome again is finished again (an earlier delivery may have stopped before publishing).
    assert.deepEqual(await second.json(), { status: 'stored' });
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
    await postNotification(a.url, {
      verificationStatus: 'SUCCESS',
      accountToken: 'acct-top',
      accountLabel: 'L',
      fiName: 'F',
      fiAccountType: 'SAVINGS',
    });
    const { linkRef, ...display } = (await state(a.sessionId)).outcome ?? {};
    assert.deepEqual(display, {
      status: 'success',
      accountLabel: 'L',
      fiName: 'F',
      fiAccountType: 'SAVINGS',
      displayLabel: 'L · Savings',
      spokenLabel: 'L, Savings',
    });
    assert.ok(linkRef);
    const b = await sessionWithNotificationUrl();
    await postNotification(b.url, { verificationStatus: 'FAILURE', error: { code: 'E1', message: 'nope' } });
    assert.deepEqual((await state(b.sessionId)).outcome, {
      status: 'failure',
      code: 'E1',
      message: 'Your bank couldn’t link this account. Choose another way to pay, or try again.',
      text: 'Your bank couldn’t link this account. Choose another way to pay, or try again.',
      lang: 'en',
    });
  });

  test('answers 422 naming account.accountToken when a success carries no token, and logs it at error', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    const response = await postNotification(url, { verificationStatus: 'SUCCESS', account: {} });
    assert.equal(response.status, 422);
    const problem = (await response.json()) as { errors: { path: string }[] };
    assert.deepEqual(
      problem.errors.map((e) => e.path),
      ['account.accountToken'],
    );
    assert.equal((await state(sessionId)).state, 'pending');
    assert.ok(pair.logs.find('notification refused: it reports no usable outcome').some((entry) => entry.level === 50));
  });

  test('a FAILURE stays a failure even when it carries an accountToken', async () => {
    const { sessionId, url } = await sessionWithNotificationUrl();
    const payload = {
      ...failurePayload('ACCOUNT_LOCKED', 'locked'),
      account: { accountToken: 'acct-in-failure', accountLabel: 'L', fiName: 'F', fiAccountType: 'CHECKING' },
    };
    assert.equal((await postNotification(url, payload)).status, 200);
    const session = await state(sessionId);
    assert.equal(session.state, 'failed');
    assert.deepEqual(session.outcome, {
      status: 'failure',
      code: 'ACCOUNT_LOCKED',
      message:
        'This account is locked at your bank. Link another account, or choose another way to pay; your bank can unlock this one.',
      text: 'This account is locked at your bank. Link another account, or choose another way to pay; your bank can unlock this one.',
      lang: 'en',
    });
    assert.equal((await pair.store.get(sessionId))?.outcome?.status, 'failure');
  });

  test('refuses an unknown, missing or look-alike verificationStatus (4xx, logged at error), even with a token', async () => {
    // "ſUCCESS" (long s) upper-cases to "SUCCESS" in Unicode: only ASCII case is ignored.
    for (const status of ['PENDING_REVIEW', undefined, '\u017fUCCESS']) {
      const { sessionId, url } = await sessionWithNotificationUrl();
      const response = await postNotification(url, {
        ...successPayload('acct-unknown-status'),
        verificationStatus: status,
      });
      assert.ok(response.status === 422 || response.status === 400, `status ${response.status}`);
      assert.deepEqual(
        ((await response.json()) as { errors: { path: string }[] }).errors.map((e) => e.path),
        ['verificationStatus'],
      );
      assert.equal((await state(sessionId)).state, 'pending');
    }
    assert.ok(
      pair.logs.find('notification refused: it reports no usable outcome').filter((entry) => entry.level === 50)
        .length >= 2,
    );
  });

  test("a notification for session A posted to session B's URL leaves B untouched", async () => {
    const a = await sessionWithNotificationUrl();
    const b = await sessionWithNotificationUrl();
    // A's signed body names A's order; the provider's verification id is bound at start as well.
    const bodyForA = successPayload('acct-for-a', 'order-of-a');
    const response = await postNotification(b.url, bodyForA);
    assert.equal(response.status, 409);
    assert.deepEqual(
      ((await response.json()) as { errors: { path: string }[] }).errors.map((e) => e.path),
      ['merchant.merchantTransactionId'],
    );
    assert.equal((await state(b.sessionId)).state, 'pending');
    assert.equal((await state(a.sessionId)).state, 'pending');
    assert.ok(pair.logs.find('notification refused: its body belongs to another verification').length > 0);
  });

  test('refuses a body whose verificationId is not the one the provider gave at start', async () => {
    const { sessionId, consumerUrl } = await pair.startVerification();
    const url = await pair.notificationUrl(sessionId);
    const given = (await pair.store.get(sessionId))?.verificationId;
    assert.ok(given && consumerUrl.includes(given), "the sandbox's verificationId was kept at start");
    const response = await postNotification(url, {
      ...successPayload('acct-other-verification'),
      verificationId: 'another-verification',
    });
    assert.equal(response.status, 409);
    assert.equal((await state(sessionId)).state, 'pending');
    assert.equal((await postNotification(url, { ...successPayload('acct-right'), verificationId: given })).status, 200);
  });

  test('de-duplicates webhook-ids across sessions: one id delivered for A is refused for B', async () => {
    const a = await sessionWithNotificationUrl();
    const b = await sessionWithNotificationUrl();
    assert.equal((await postNotification(a.url, successPayload('acct-a'), { id: 'msg_cross_1' })).status, 200);
    const replay = await postNotification(b.url, successPayload('acct-b'), { id: 'msg_cross_1' });
    assert.equal(replay.status, 409);
    assert.equal((await state(b.sessionId)).state, 'pending');
  });

  test('accepts the status words the merchant configured for a provider that spells them differently', async (t) => {
    const custom = await startProxyPair({
      proxy: { successStatuses: ['VERIFIED'], failureStatuses: ['REJECTED', 'FAILURE'] },
    });
    t.after(() => custom.close());
    const { sessionId } = await custom.startVerification();
    const url = await custom.notificationUrl(sessionId);
    assert.equal(
      (await postNotification(url, { ...successPayload('acct-custom'), verificationStatus: 'SUCCESS' })).status,
      422,
    );
    assert.equal(
      (await postNotification(url, { ...successPayload('acct-custom'), verificationStatus: 'verified' })).status,
      200,
    );
    assert.equal(
      ((await lookupSession(custom.baseUrl, sessionId).then((r) => r.json())) as { state: string }).state,
      'succeeded',
    );
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

describe('the onOutcome hook', () => {
  test('is called once per session with the token, even with no browser watching and a duplicate delivery', async (t) => {
    const reports: OutcomeReport[] = [];
    const pair = await startProxyPair({ proxy: { onOutcome: (report) => void reports.push(report) } });
    pair.provider.faults.duplicateNotifications = 1;
    t.after(() => pair.close());
    const { sessionId, consumerUrl } = await pair.startVerification();
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    assert.equal(reports.length, 1);
    const [report] = reports;
    assert.equal(report?.sessionId, sessionId);
    assert.equal(report?.merchantTransactionId, 'order-1001');
    assert.equal(report?.merchantUserId, 'user-42');
    assert.equal(report?.amount, '49.99');
    assert.equal(report?.outcome.status, 'success');
    assert.ok(report?.outcome.status === 'success' && pair.provider.state.accounts.has(report.outcome.accountToken));
  });

  test('a hook that throws makes the provider retry, and the retry calls it again until it returns', async (t) => {
    let calls = 0;
    const pair = await startProxyPair({
      proxy: {
        onOutcome: () => {
          calls += 1;
          if (calls === 1) throw new Error('merchant database down');
        },
      },
    });
    t.after(() => pair.close());
    const { sessionId } = await pair.startVerification();
    const url = await pair.notificationUrl(sessionId);
    const payload = successPayload('acct-hook');
    const first = await postNotification(url, payload, { id: 'msg_hook_1' });
    assert.equal(first.status, 500);
    assert.equal((await postNotification(url, payload, { id: 'msg_hook_1' })).status, 200);
    assert.equal((await postNotification(url, payload, { id: 'msg_hook_1' })).status, 200);
    assert.equal(calls, 2, 'called again after the failure, and not after it returned');
    assert.ok(pair.logs.find('the onOutcome hook failed; the next delivery').length > 0);
  });

  test('overlapping deliveries call a slow hook once: the other is answered 503 and its retry finds it done', async (t) => {
    let calls = 0;
    const pair = await startProxyPair({
      proxy: {
        onOutcome: async () => {
          calls += 1;
          await new Promise((resolve) => setTimeout(resolve, 300));
        },
      },
    });
    t.after(() => pair.close());
    const { sessionId } = await pair.startVerification();
    const url = await pair.notificationUrl(sessionId);
    const payload = successPayload('acct-slow-hook');
    const statuses = (await Promise.all([0, 1].map(() => postNotification(url, payload, { id: 'msg_slow_1' })))).map(
      (r) => r.status,
    );
    assert.deepEqual(statuses.sort(), [200, 503]);
    assert.equal((await postNotification(url, payload, { id: 'msg_slow_1' })).status, 200);
    assert.equal(calls, 1);
  });
});
