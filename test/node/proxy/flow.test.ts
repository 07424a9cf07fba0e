// The whole verification flow against the sandbox provider: start, the consumer at the bank, the
// signed notification, and the outcome over the WebSocket and GET.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { startProxyPair, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { connectRelay } from '../../helpers/relay-client.ts';
import { cancelSession, lookupSession } from '../../helpers/session-requests.ts';
import { BANK_STEP_WORDS } from '../../../proxy/words/bank-step.ts';

describe('verification flow against the sandbox', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair();
  });
  after(() => pair.close());

  async function getSession(sessionId: string) {
    const response = await lookupSession(pair.baseUrl, sessionId);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  test("starts a verification and answers 201 with sessionId, consumerUrl, expiresAt and the element's words", async () => {
    const response = await fetch(`${pair.baseUrl}/verifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: pair.origin },
      body: JSON.stringify({ linkToken: await pair.createLinkSession({ merchantUserId: 'u-1', amount: '10.00' }) }),
    });
    assert.equal(response.status, 201);
    const { words, ...body } = (await response.json()) as Record<string, string> & { words: unknown };
    assert.deepEqual(Object.keys(body).sort(), ['consumerUrl', 'expiresAt', 'sessionId']);
    // The words of the states after a start, both languages: the element shows its own language's.
    assert.deepEqual(words, BANK_STEP_WORDS);
    assert.equal(BANK_STEP_WORDS.es.waitingTitle, 'Continúa en tu banco');
    assert.match(body.sessionId!, /^[A-Za-z0-9_-]{22}$/);
    assert.ok(body.consumerUrl!.startsWith(`${pair.provider.url}/consumer/`));
    assert.ok(Date.parse(body.expiresAt!) > Date.now());
    const session = await getSession(body.sessionId!);
    assert.equal(session.body.state, 'pending');
  });

  test('delivers a success over the WebSocket after the consumer signs in at the bank', async () => {
    const { sessionId, consumerUrl } = await pair.startVerification();
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId });
    assert.deepEqual(await client.next(), { type: 'subscribed', sessionId, state: 'pending' });

    const bank = await completeConsumerStep(consumerUrl, 'good');
    assert.equal(bank.status, 303);
    assert.equal(bank.headers.get('location'), await pair.returnUrl(sessionId));
    assert.ok(!bank.headers.get('location')!.includes(sessionId), 'the session id never travels to the provider');

    const result = await client.next((message) => message.type === 'result');
    assert.equal(result.sessionId, sessionId);
    const outcome = result.outcome as Record<string, string>;
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.accountLabel, 'Checking ••••4321');
    assert.equal(outcome.fiName, 'Sandbox Federal Bank');
    assert.equal(outcome.fiAccountType, 'CHECKING');
    assert.match(outcome.linkRef!, /^[A-Za-z0-9_-]{22}$/);
    assert.equal(outcome.accountToken, undefined, 'the browser gets a link reference, never the accountToken');
    assert.ok(!pair.provider.state.accounts.has(outcome.linkRef!));
    assert.equal((await client.closed).code, 1000);

    const session = await getSession(sessionId);
    assert.equal(session.body.state, 'succeeded');
    assert.deepEqual(session.body.outcome, outcome);
  });

  test("delivers a failure with the bank's code in the proxy's words (the bank's message stays on the server)", async () => {
    const { sessionId, consumerUrl } = await pair.startVerification();
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId });
    await client.next((message) => message.type === 'subscribed');
    await completeConsumerStep(consumerUrl, 'locked');
    const result = await client.next((message) => message.type === 'result');
    assert.deepEqual(result.outcome, {
      status: 'failure',
      code: 'ACCOUNT_LOCKED',
      message:
        'This account is locked at your bank. Link another account, or choose another way to pay; your bank can unlock this one.',
      text: 'This account is locked at your bank. Link another account, or choose another way to pay; your bank can unlock this one.',
      lang: 'en',
    });
    assert.equal((await getSession(sessionId)).body.state, 'failed');
  });

  test('words a Spanish verification for the shopper in Spanish: the failure translated, the account line and its spoken form', async () => {
    const locked = await pair.startVerification({ language: 'es-MX' });
    await completeConsumerStep(locked.consumerUrl, 'locked');
    await pair.provider.notificationsSettled();
    assert.deepEqual((await getSession(locked.sessionId)).body.outcome, {
      status: 'failure',
      code: 'ACCOUNT_LOCKED',
      message:
        'This account is locked at your bank. Link another account, or choose another way to pay; your bank can unlock this one.',
      text: 'Esta cuenta está bloqueada en tu banco. Vincula otra cuenta o elige otra forma de pago; tu banco puede desbloquearla.',
      lang: 'es',
    });
    const linked = await pair.startVerification({ language: 'es' });
    await completeConsumerStep(linked.consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const outcome = (await getSession(linked.sessionId)).body.outcome as Record<string, string>;
    assert.equal(outcome.accountLabel, 'Checking ••••4321', 'the provider’s label itself is passed on unchanged');
    assert.equal(outcome.displayLabel, 'Corriente ••••4321');
    assert.equal(outcome.spokenLabel, 'Cuenta corriente terminada en 4321');
  });

  test('reports a cancel at the bank as a CONSUMER_CANCELLED failure', async () => {
    const { sessionId, consumerUrl } = await pair.startVerification();
    await completeConsumerStep(consumerUrl, 'cancel');
    await pair.provider.notificationsSettled();
    const session = await getSession(sessionId);
    assert.equal((session.body.outcome as Record<string, string>).code, 'CONSUMER_CANCELLED');
  });

  test('sends an outcome stored before the subscription at once, and again to a reconnecting socket', async () => {
    const { sessionId, consumerUrl } = await pair.startVerification();
    await completeConsumerStep(consumerUrl, 'savings');
    await pair.provider.notificationsSettled();

    for (let attempt = 0; attempt < 2; attempt++) {
      const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
      client.send({ type: 'subscribe', sessionId });
      assert.deepEqual(await client.next(), { type: 'subscribed', sessionId, state: 'succeeded' });
      const result = await client.next();
      assert.equal(result.type, 'result');
      assert.equal((result.outcome as Record<string, string>).fiAccountType, 'SAVINGS');
      assert.equal((await client.closed).code, 1000);
      assert.equal(client.messages.filter((message) => message.type === 'result').length, 1);
    }
  });

  test('tells the subscriber the consumer came back, and the return page announces it', async () => {
    const { sessionId } = await pair.startVerification();
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId });
    await client.next((message) => message.type === 'subscribed');
    const page = await fetch(await pair.returnUrl(sessionId));
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /Bank step complete/);
    assert.match(html, /data-returned/);
    assert.ok(!html.includes(sessionId), 'the return page does not carry the session id');
    // A session id in place of the return reference opens nothing.
    assert.equal(
      (await fetch(`${pair.baseUrl}/return/${sessionId}`, { headers: { accept: 'text/html' } })).status,
      404,
    );
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.deepEqual(await client.next(), { type: 'state', sessionId, state: 'returned' });
    assert.equal((await getSession(sessionId)).body.state, 'returned');
    client.close();

    const script = await fetch(`${pair.baseUrl}/return-page.js`);
    assert.equal(script.status, 200);
    const source = await script.text();
    assert.match(source, /BroadcastChannel\('obv-link'\)/);
    assert.match(source, /obv-returned/);
    assert.match(source, /window\.close\(\)/);
  });

  test("never shows one session's outcome to another session's subscriber", async () => {
    const first = await pair.startVerification();
    const second = await pair.startVerification();
    const firstClient = await connectRelay(pair.wsUrl, { origin: pair.origin });
    const secondClient = await connectRelay(pair.wsUrl, { origin: pair.origin });
    firstClient.send({ type: 'subscribe', sessionId: first.sessionId });
    secondClient.send({ type: 'subscribe', sessionId: second.sessionId });
    await firstClient.next((message) => message.type === 'subscribed');
    await secondClient.next((message) => message.type === 'subscribed');

    await completeConsumerStep(first.consumerUrl, 'good');
    const result = await firstClient.next((message) => message.type === 'result');
    assert.equal(result.sessionId, first.sessionId);
    await completeConsumerStep(second.consumerUrl, 'notVerified');
    const secondResult = await secondClient.next((message) => message.type === 'result');
    assert.equal(secondResult.sessionId, second.sessionId);
    assert.equal((secondResult.outcome as Record<string, string>).status, 'failure');
    for (const message of secondClient.messages) assert.notEqual(message.sessionId, first.sessionId);
    for (const message of firstClient.messages) assert.notEqual(message.sessionId, second.sessionId);
    assert.equal((await getSession(second.sessionId)).body.state, 'failed');
  });

  test('answers 404 problem+json for an unknown session', async () => {
    const response = await lookupSession(pair.baseUrl, 'AAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(response.status, 404);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    const body = (await response.json()) as Record<string, unknown>;
    assert.equal(body.status, 404);
  });

  test('reads and cancels a session only with its id in the JSON body, never in the URL', async () => {
    const { sessionId } = await pair.startVerification();
    // The former routes, with the id in the path, are gone.
    assert.equal((await fetch(`${pair.baseUrl}/sessions/${sessionId}`)).status, 404);
    assert.equal((await fetch(`${pair.baseUrl}/sessions/${sessionId}/cancel`, { method: 'POST' })).status, 404);
    assert.equal((await lookupSession(pair.baseUrl, sessionId)).status, 200);
    const missing = await fetch(`${pair.baseUrl}/sessions/lookup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(missing.status, 400);
    const problem = (await missing.json()) as { errors: Array<{ path: string }> };
    assert.deepEqual(
      problem.errors.map((error) => error.path),
      ['sessionId'],
    );
    const extra = await fetch(`${pair.baseUrl}/sessions/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId, amount: '1.00' }),
    });
    assert.equal(extra.status, 400);
    const form = await fetch(`${pair.baseUrl}/sessions/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `sessionId=${sessionId}`,
    });
    assert.equal(form.status, 415);
    const cancelled = (await (await cancelSession(pair.baseUrl, sessionId)).json()) as { state: string };
    assert.equal(cancelled.state, 'failed');
    // The proxy's request log names the routes, not the session.
    for (const line of pair.logs.lines)
      assert.ok(!line.includes(sessionId), `log line carries the session id: ${line}`);
  });

  test('answers an unknown return link with a page for a browser and problem+json for an API client', async () => {
    const page = await fetch(`${pair.baseUrl}/return/AAAAAAAAAAAAAAAAAAAAAA`, {
      headers: { accept: 'text/html,*/*;q=0.8' },
    });
    assert.equal(page.status, 404);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.doesNotMatch(await page.text(), /<script/);
    const api = await fetch(`${pair.baseUrl}/return/AAAAAAAAAAAAAAAAAAAAAA`, {
      headers: { accept: 'application/json' },
    });
    assert.equal(api.status, 404);
    assert.match(api.headers.get('content-type') ?? '', /^application\/problem\+json/);
  });

  test('answers /healthz', async () => {
    const response = await fetch(`${pair.baseUrl}/healthz`);
    assert.deepEqual(await response.json(), { status: 'ok' });
  });
});
