// The bank step bound to the browser that started it (OBV_BIND_BANK_STEP): the start's answer sets a
// cookie scoped to the session's return page; a success is released (link reference, onOutcome,
// redemption) only once a request carrying that cookie reaches the return page. The attack it stops: an
// attacker starts a session, sends its consumerUrl to a victim, the victim signs in — the attacker's
// link reference must not be backed by the victim's account. (test/e2e/bank-step-binding.test.ts plays it
// in two real browsers.)
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { OutcomeReport } from '../../../proxy/index.ts';
import { createLogger, createStorage } from '../../../proxy/index.ts';
import { markerKey } from '../../../proxy/sessions/markers.ts';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { PURCHASE, startProxy, startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair, type RunningProxy } from '../../helpers/proxy-harness.ts';
import { redisSkipReason, startRedisServer } from '../../helpers/redis-server.ts';
import { failurePayload, postNotification } from '../../helpers/webhooks.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

interface Started {
  sessionId: string;
  consumerUrl: string;
  /** The `name=value` of the binding cookie the answer set, and its attributes. */
  cookie: string;
  setCookie: string;
}

async function bindingPair(t: TestContext, reports: OutcomeReport[] = [], provider = {}, proxy = {}): Promise<ProxyPair> {
  const pair = await startProxyPair({ provider, proxy: { bindBankStep: true, onOutcome: (report) => void reports.push(report), ...proxy } });
  t.after(() => pair.close());
  return pair;
}

/** POST /verifications with a new link session's token as the page on the proxy's origin does, keeping the cookie its answer sets. */
async function start(proxy: Pick<RunningProxy, 'baseUrl' | 'origin' | 'createLinkSession'>, headers: Record<string, string> = { origin: proxy.origin, 'sec-fetch-site': 'same-origin' }) {
  const response = await fetch(`${proxy.baseUrl}/verifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ linkToken: await proxy.createLinkSession() }),
  });
  const body = (await response.json()) as Record<string, unknown>;
  const setCookie = response.headers.get('set-cookie') ?? '';
  return { response, body, started: { sessionId: String(body.sessionId), consumerUrl: String(body.consumerUrl), cookie: setCookie.split(';')[0] ?? '', setCookie } };
}

/** The consumer signs in at the bank and follows its redirect back, with or without the binding cookie. */
async function signInAndReturn(started: Started, cookie?: string): Promise<Response> {
  const bank = await completeConsumerStep(started.consumerUrl, 'good');
  const returnUrl = bank.headers.get('location');
  assert.ok(returnUrl, 'the bank sends the consumer back');
  return fetch(returnUrl, { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) } });
}

const session = async (proxy: Pick<RunningProxy, 'baseUrl'>, sessionId: string) =>
  (await (await lookupSession(proxy.baseUrl, sessionId)).json()) as { state: string; outcome?: { linkRef?: string } };

function pay(proxy: Pick<RunningProxy, 'baseUrl'>, linkRef: string) {
  return fetch(`${proxy.baseUrl}/transactions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
    body: JSON.stringify({ linkRef, merchantUserId: PURCHASE.merchantUserId, merchantTransactionId: PURCHASE.merchantTransactionId, amount: PURCHASE.amount, currency: PURCHASE.currency }),
  });
}

describe('bank step bound to the starting browser', () => {
  test('the start\'s answer sets an HttpOnly, SameSite=Lax cookie scoped to the session\'s return page', async (t) => {
    const pair = await bindingPair(t);
    const { response, started } = await start(pair);
    assert.equal(response.status, 201);
    const returnPath = new URL(await pair.returnUrl(started.sessionId)).pathname;
    assert.match(started.setCookie, /^obv_bank_step=[A-Za-z0-9_-]{43}; /);
    assert.match(started.setCookie, new RegExp(`; Path=${returnPath};`));
    assert.match(started.setCookie, /; HttpOnly/);
    assert.match(started.setCookie, /; SameSite=Lax/);
    assert.ok(!started.setCookie.includes(started.sessionId), 'the cookie is not the session id');
  });

  test('a start its cookie could not reach (no Origin, another allowed origin, a cross-site fetch) is refused before the provider is called', async (t) => {
    const pair = await bindingPair(t, [], {}, { allowedOrigins: ['https://elsewhere.example'] });
    assert.equal(pair.logs.find('OBV_BIND_BANK_STEP is on').length, 1, 'the allowed origins are warned about at boot');
    const before = pair.provider.stats.verificationRequests;
    const refusedStarts: Record<string, string>[] = [{}, { origin: 'https://elsewhere.example' }, { origin: pair.origin, 'sec-fetch-site': 'cross-site' }];
    for (const headers of refusedStarts) {
      const { response, body } = await start(pair, headers);
      assert.equal(response.status, 403, JSON.stringify(headers));
      assert.equal(body.type, 'urn:obv-link:problem:bank-step-unbindable');
      assert.match(String(body.detail), /OBV_BIND_BANK_STEP/);
    }
    assert.equal(pair.provider.stats.verificationRequests, before);
  });

  test('the attack: a victim who signs in through the attacker\'s consumerUrl releases nothing to the attacker', async (t) => {
    const reports: OutcomeReport[] = [];
    const pair = await bindingPair(t, reports);
    const { started } = await start(pair);
    // The victim's browser has no cookie of the attacker's session.
    const back = await signInAndReturn(started);
    assert.equal(back.status, 403);
    assert.match(await back.text(), /Finish in the browser where you started/);
    await pair.provider.notificationsSettled();
    // The provider's success is stored (and its notification answered 503, so the provider kept retrying).
    const stored = await pair.store.get(started.sessionId);
    assert.equal(stored?.outcome?.status, 'success');
    assert.ok(pair.responses.some((r) => r.path.includes('/notifications/') && r.status === 503));
    // The attacker's page sees a session still pending, without a link reference; the merchant hears nothing.
    const view = await session(pair, started.sessionId);
    assert.equal(view.state, 'pending');
    assert.equal(view.outcome, undefined);
    assert.deepEqual(reports, []);
    // Even a reference that leaked (read from the store here) pays nothing and reads nothing: a clear 4xx.
    const leaked = stored?.outcome?.status === 'success' ? stored.outcome.linkRef : '';
    assert.equal((await pay(pair, leaked)).status, 404);
    await pair.store.mark(markerKey.linkRef(leaked), started.sessionId, 60_000);
    const refused = await pay(pair, leaked);
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { type: string }).type, 'urn:obv-link:problem:bank-step-unconfirmed');
    const read = await fetch(`${pair.baseUrl}/links/${leaked}`, { headers: { authorization: `Bearer ${TEST_MERCHANT_API_KEY}` } });
    assert.equal(read.status, 403);
    assert.equal(pair.provider.stats.transactions, 0);
  });

  test('the starting browser coming back releases the success: link reference, onOutcome once, one payment', async (t) => {
    const reports: OutcomeReport[] = [];
    const pair = await bindingPair(t, reports);
    const { started } = await start(pair);
    const back = await signInAndReturn(started, started.cookie);
    assert.equal(back.status, 200);
    assert.match(await back.text(), /Bank step complete/);
    await pair.provider.notificationsSettled();
    const view = await session(pair, started.sessionId);
    assert.equal(view.state, 'succeeded');
    const linkRef = view.outcome?.linkRef ?? '';
    assert.ok(linkRef);
    assert.equal(reports.length, 1);
    assert.equal((await pay(pair, linkRef)).status, 201);
  });

  test('a success that arrives after the starting browser came back is released at once', async (t) => {
    const pair = await bindingPair(t, [], { faults: { notificationDelayMs: 300 } });
    const { started } = await start(pair);
    assert.equal((await signInAndReturn(started, started.cookie)).status, 200);
    assert.equal((await session(pair, started.sessionId)).outcome, undefined, 'nothing yet: the notification is delayed');
    await pair.provider.notificationsSettled();
    assert.ok((await session(pair, started.sessionId)).outcome?.linkRef);
    assert.ok(!pair.responses.some((r) => r.path.includes('/notifications/') && r.status === 503), 'no held delivery');
  });

  test('a different later notification for a held success is acknowledged and ignored, not retried', async (t) => {
    const pair = await bindingPair(t);
    const { started } = await start(pair);
    await completeConsumerStep(started.consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const late = await postNotification(await pair.notificationUrl(started.sessionId), failurePayload());
    assert.equal(late.status, 200);
    assert.deepEqual(await late.json(), { status: 'ignored' });
    assert.equal((await pair.store.get(started.sessionId))?.outcome?.status, 'success', 'the first outcome stays');
  });

  test('another session\'s cookie does not confirm this one', async (t) => {
    const pair = await bindingPair(t);
    const mine = (await start(pair)).started;
    const theirs = (await start(pair)).started;
    assert.equal((await signInAndReturn(theirs, mine.cookie)).status, 403);
  });

  test('sandbox mode leaves it off unless asked, and then starts from anywhere as before', async (t) => {
    const pair = await startProxyPair();
    t.after(() => pair.close());
    assert.equal(pair.proxy.config.bindBankStep, false);
    const { response, started } = await start(pair, {});
    assert.equal(response.status, 201);
    assert.equal(started.setCookie, '');
  });
});

describe('bank step binding with Redis across two instances', { skip: redisSkipReason() }, () => {
  test('started on one instance, the browser comes back to the other: released on both', async (t) => {
    const redis = await startRedisServer();
    t.after(() => redis.stop());
    const backend = () => {
      const made = createStorage({ kind: 'redis', redisUrl: redis.url, redisPrefix: 'bind-test:', logger: createLogger('silent') });
      t.after(() => made.close());
      return { sessionStore: made.sessionStore, resultBus: made.resultBus };
    };
    const first = await startProxyPair({ proxy: { bindBankStep: true, ...backend() } });
    t.after(() => first.close());
    const second = await startProxy({ providerUrl: first.provider.url, proxy: { bindBankStep: true, ...backend() } });
    t.after(() => second.close());
    const { started } = await start(first);
    const bank = await completeConsumerStep(started.consumerUrl, 'good');
    const returnPath = new URL(bank.headers.get('location') ?? '').pathname;
    await first.provider.notificationsSettled();
    assert.equal((await session(second, started.sessionId)).outcome, undefined, 'held on every instance');
    const back = await fetch(`${second.baseUrl}${returnPath.slice('/obv'.length)}`, { headers: { accept: 'text/html', cookie: started.cookie } });
    assert.equal(back.status, 200);
    for (const proxy of [first, second]) assert.ok((await session(proxy, started.sessionId)).outcome?.linkRef);
  });
});
