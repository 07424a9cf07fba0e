// The bank step bound to the browser that started it (OBV_BIND_BANK_STEP), played by an attacker who
// acts. The attack: the attacker starts a session (a script: it sets any Origin and keeps the cookie),
// sends its consumerUrl to a victim, the victim signs in at the bank. Whatever the attacker does with
// their cookie and the return page — before the victim signs in, polling while the victim's redirect
// comes back, after it — with or without saving the account, the attacker gets no link reference, no
// payment and no saved account; the shopper who starts and finishes in one browser pays at once.
// (test/e2e/bank-step-binding.test.ts plays it in two real browsers.)
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test, type TestContext } from 'node:test';
import type { ObvProxyOptions, OutcomeReport } from '../../../proxy/index.ts';
import { createLogger, createStorage, type Storage } from '../../../proxy/index.ts';
import { CONSENT_VERSION } from '../../../proxy/words/consent.ts';
import { markerKey } from '../../../proxy/storage/markers.ts';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import {
  PURCHASE,
  startProxy,
  startProxyPair,
  TEST_MERCHANT_API_KEY,
  type ProxyPair,
  type RunningProxy,
} from '../../helpers/proxy-harness.ts';
import { redisSkipReason, startRedisServer } from '../../helpers/redis-server.ts';
import { relayUrl, subscribedRelay } from '../../helpers/relay-client.ts';
import { eventually, inspector } from '../redis/support.ts';
import { failurePayload, postNotification } from '../../helpers/webhooks.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

/** The return grace in these tests (the default is 10 s). */
const GRACE_MS = 300;

interface Started {
  sessionId: string;
  consumerUrl: string;
  /** The `name=value` of the binding cookie the answer set, and its attributes. */
  cookie: string;
  setCookie: string;
}

type Proxy = Pick<RunningProxy, 'baseUrl' | 'origin' | 'createLinkSession'>;

/** SQLite in a directory of its own: the production default; `remove()` closes and deletes it. */
function sqliteBackend(): { storage: Storage; remove(): Promise<void> } {
  const dataDir = mkdtempSync(join(tmpdir(), 'obv-bank-step-'));
  const storage = createStorage({ kind: 'sqlite', dataDir, logger: createLogger('silent') });
  return {
    storage,
    async remove() {
      await storage.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The provider and a proxy with the binding on (production mode's), on SQLite unless `proxy.backend` says otherwise. */
async function bindingPair(
  t: TestContext,
  reports: OutcomeReport[] = [],
  provider = {},
  proxy: Partial<ObvProxyOptions> = {},
): Promise<ProxyPair> {
  const own = proxy.backend ? undefined : sqliteBackend();
  const pair = await startProxyPair({
    provider,
    proxy: {
      bindBankStep: true,
      bankStepGraceMs: GRACE_MS,
      onOutcome: (report) => void reports.push(report),
      ...proxy,
      backend: proxy.backend ?? own!.storage,
    },
  });
  t.after(async () => {
    await pair.close();
    await own?.remove();
  });
  return pair;
}

/**
 * POST /verifications with a new link session's token, keeping the cookie its answer sets. The headers
 * are a same-origin page's, which any script can send: the attacker below is such a script.
 */
async function start(
  proxy: Proxy,
  options: { saving?: boolean; headers?: Record<string, string>; cookie?: string } = {},
) {
  const headers = options.headers ?? { origin: proxy.origin, 'sec-fetch-site': 'same-origin' };
  const linkToken = await proxy.createLinkSession(options.saving ? { allowSaving: true } : {});
  const response = await fetch(`${proxy.baseUrl}/verifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers, ...(options.cookie ? { cookie: options.cookie } : {}) },
    body: JSON.stringify({ linkToken, ...(options.saving ? { consent: CONSENT_VERSION } : {}) }),
  });
  const body = (await response.json()) as Record<string, unknown>;
  const setCookie = response.headers.get('set-cookie') ?? '';
  const started: Started = {
    sessionId: String(body.sessionId),
    consumerUrl: String(body.consumerUrl),
    cookie: setCookie.split(';')[0] ?? '',
    setCookie,
  };
  return { response, body, started };
}

/** The consumer signs in at the bank; the URL the bank redirects their browser to (not followed yet). */
async function signIn(started: Started): Promise<string> {
  const bank = await completeConsumerStep(started.consumerUrl, 'good');
  const returnUrl = bank.headers.get('location');
  assert.ok(returnUrl, 'the bank sends the consumer back');
  return returnUrl;
}

/** A visit to the return page, with or without a cookie. */
async function visit(returnUrl: string, cookie?: string): Promise<{ status: number; text: string }> {
  const response = await fetch(returnUrl, { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) } });
  return { status: response.status, text: await response.text() };
}

/** The starting browser's return, reloaded as the "Finishing…" page does until it says something else. */
async function returnUntilDone(returnUrl: string, cookie: string): Promise<{ status: number; text: string }> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const page = await visit(returnUrl, cookie);
    if (!page.text.includes('Finishing your bank step')) return page;
    assert.equal(page.status, 200);
    assert.match(page.text, /<meta http-equiv="refresh" content="\d+">/);
    await sleep(GRACE_MS / 3);
  }
  throw new Error('the return page never finished');
}

const COMPLETE = /Bank step complete/;

const session = async (proxy: Pick<RunningProxy, 'baseUrl'>, sessionId: string) =>
  (await (await lookupSession(proxy.baseUrl, sessionId)).json()) as {
    state: string;
    outcome?: { linkRef?: string; code?: string; status?: string };
  };

function pay(proxy: Pick<RunningProxy, 'baseUrl'>, linkRef: string) {
  return fetch(`${proxy.baseUrl}/transactions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
    body: JSON.stringify({
      linkRef,
      merchantUserId: PURCHASE.merchantUserId,
      merchantTransactionId: PURCHASE.merchantTransactionId,
      amount: PURCHASE.amount,
      currency: PURCHASE.currency,
    }),
  });
}

const readLink = (proxy: Pick<RunningProxy, 'baseUrl'>, linkRef: string) =>
  fetch(`${proxy.baseUrl}/links/${linkRef}`, { headers: { authorization: `Bearer ${TEST_MERCHANT_API_KEY}` } });

/**
 * Everything the attacker could get, checked: the session reads as BANK_STEP_ELSEWHERE without a link
 * reference, the merchant's hook never saw a success (nor a saved account), and the link reference the
 * store holds — were it to leak — reads and pays nothing, even indexed by hand.
 */
async function assertAttackerGetsNothing(pair: ProxyPair, started: Started, reports: OutcomeReport[]): Promise<void> {
  const view = await session(pair, started.sessionId);
  assert.equal(view.state, 'failed');
  assert.equal(view.outcome?.code, 'BANK_STEP_ELSEWHERE');
  assert.equal(view.outcome?.linkRef, undefined);
  assert.ok(
    reports.every((report) => report.outcome.status === 'failure' && report.outcome.code === 'BANK_STEP_ELSEWHERE'),
    JSON.stringify(reports),
  );
  assert.ok(reports.every((report) => !('savedAccount' in report.outcome)));
  const stored = await pair.store.get(started.sessionId);
  if (stored?.outcome?.status === 'success') {
    const leaked = stored.outcome.linkRef;
    // Indexed only when a page was shown it (an attacker who learned the proof, below).
    if ((await pair.store.readMark(markerKey.linkRef(leaked))) === undefined) {
      assert.equal((await pay(pair, leaked)).status, 404);
      assert.equal((await readLink(pair, leaked)).status, 404);
      await pair.store.mark(markerKey.linkRef(leaked), started.sessionId, 60_000);
    }
    const refused = await pay(pair, leaked);
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { type: string }).type, 'urn:obv-link:problem:bank-step-unconfirmed');
    assert.equal((await readLink(pair, leaked)).status, 403, 'no saved account to read either');
  }
  assert.equal(pair.provider.stats.transactions, 0, 'nothing was paid');
  // The provider was told 2xx for every notification: holding is the proxy's own state.
  assert.ok(pair.responses.filter((r) => r.path.includes('/notifications/')).every((r) => r.status === 200));
}

describe('bank step bound to the starting browser', () => {
  test('the cookie names no return page: one opaque HttpOnly, SameSite=Lax secret per browser, scoped to the mount path', async (t) => {
    const pair = await bindingPair(t);
    const { response, started } = await start(pair);
    assert.equal(response.status, 201);
    const returnRef = new URL(await pair.returnUrl(started.sessionId)).pathname.split('/').pop()!;
    assert.match(started.setCookie, /^obv_bank_step=[A-Za-z0-9_-]{43}; /);
    assert.match(started.setCookie, /; Path=\/obv;/);
    assert.match(started.setCookie, /; HttpOnly/);
    assert.match(started.setCookie, /; SameSite=Lax/);
    assert.ok(!started.setCookie.includes(returnRef), 'the cookie does not reveal the return page');
    assert.ok(!started.setCookie.includes(started.sessionId), 'the cookie is not the session id');
    // A second start in the same browser keeps its secret, so both checkouts stay bound to it.
    const second = (await start(pair, { cookie: started.cookie })).started;
    assert.equal(second.cookie, started.cookie);
    const record = await pair.store.get(second.sessionId);
    assert.ok(
      record?.browserBinding && !started.cookie.includes(record.browserBinding),
      'the session keeps a digest, not the secret',
    );
  });

  test('a start its cookie could not reach (no Origin, another allowed origin, a cross-site fetch) is refused before the provider is called', async (t) => {
    const pair = await bindingPair(t, [], {}, { allowedOrigins: ['https://elsewhere.example'] });
    assert.equal(pair.logs.find('OBV_BIND_BANK_STEP is on').length, 1, 'the allowed origins are warned about at boot');
    const before = pair.provider.stats.verificationRequests;
    const refusedStarts: Record<string, string>[] = [
      {},
      { origin: 'https://elsewhere.example' },
      { origin: pair.origin, 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of refusedStarts) {
      const { response, body } = await start(pair, { headers });
      assert.equal(response.status, 403, JSON.stringify(headers));
      assert.equal(body.type, 'urn:obv-link:problem:bank-step-unbindable');
      assert.match(String(body.detail), /OBV_BIND_BANK_STEP/);
    }
    assert.equal(pair.provider.stats.verificationRequests, before);
  });

  for (const saving of [false, true]) {
    const how = saving ? ' (saving the account)' : '';

    test(`the attacker confirms before the victim signs in: it does not count, and the victim's return ends it${how}`, async (t) => {
      const reports: OutcomeReport[] = [];
      const pair = await bindingPair(t, reports);
      const { started } = await start(pair, { saving });
      const attackersReturn = await pair.returnUrl(started.sessionId);
      const early = await visit(attackersReturn, started.cookie);
      assert.equal(early.status, 200);
      assert.doesNotMatch(early.text, COMPLETE);
      assert.match(early.text, /Finishing your bank step/);
      // The victim signs in and the bank sends their browser (no cookie of the attacker's) back.
      const victimsReturn = await signIn(started);
      const victim = await visit(victimsReturn);
      assert.equal(victim.status, 403);
      assert.match(victim.text, /Finish in the browser where you started/);
      await pair.provider.notificationsSettled();
      await sleep(GRACE_MS * 2);
      const late = await returnUntilDone(attackersReturn, started.cookie);
      assert.equal(late.status, 403);
      assert.doesNotMatch(late.text, COMPLETE);
      await assertAttackerGetsNothing(pair, started, reports);
    });

    test(`the attacker polls the return page while the victim's redirect comes back: the victim's return wins${how}`, async (t) => {
      const reports: OutcomeReport[] = [];
      const pair = await bindingPair(t, reports);
      const { started } = await start(pair, { saving });
      const attackersReturn = await pair.returnUrl(started.sessionId);
      const seen: { status: number; text: string }[] = [];
      let polling = true;
      const poller = (async () => {
        while (polling) seen.push(await visit(attackersReturn, started.cookie));
      })();
      await sleep(50);
      const victimsReturn = await signIn(started);
      // The provider's success is stored first; the victim's browser arrives a moment later, inside the grace.
      await pair.provider.notificationsSettled();
      await sleep(GRACE_MS / 3);
      assert.equal((await visit(victimsReturn)).status, 403);
      await sleep(GRACE_MS * 2);
      polling = false;
      await poller;
      assert.ok(seen.length > 5, `the attacker polled (${seen.length} visits)`);
      assert.ok(
        seen.every((page) => !COMPLETE.test(page.text)),
        'no visit of the attacker confirmed anything',
      );
      assert.equal(seen.at(-1)?.status, 403);
      await assertAttackerGetsNothing(pair, started, reports);
    });

    test(`the attacker confirms after the victim's return: nothing${how}`, async (t) => {
      const reports: OutcomeReport[] = [];
      const pair = await bindingPair(t, reports);
      const { started } = await start(pair, { saving });
      const victimsReturn = await signIn(started);
      await pair.provider.notificationsSettled();
      assert.equal((await visit(victimsReturn)).status, 403);
      await sleep(GRACE_MS * 2);
      const attacker = await visit(await pair.returnUrl(started.sessionId), started.cookie);
      assert.equal(attacker.status, 403);
      assert.doesNotMatch(attacker.text, COMPLETE);
      await assertAttackerGetsNothing(pair, started, reports);
    });

    test(`the victim comes back before the provider's success arrives: it is never even stored${how}`, async (t) => {
      const reports: OutcomeReport[] = [];
      const pair = await bindingPair(t, reports, { faults: { notificationDelayMs: 300 } });
      const { started } = await start(pair, { saving });
      const victimsReturn = await signIn(started);
      assert.equal((await visit(victimsReturn)).status, 403);
      // The attacker's page learns at once that it failed.
      assert.equal((await session(pair, started.sessionId)).outcome?.code, 'BANK_STEP_ELSEWHERE');
      await pair.provider.notificationsSettled();
      assert.equal((await visit(await pair.returnUrl(started.sessionId), started.cookie)).status, 403);
      const stored = await pair.store.get(started.sessionId);
      assert.equal(stored?.outcome?.status, 'failure', 'the success was acknowledged and ignored, never stored');
      await assertAttackerGetsNothing(pair, started, reports);
      assert.equal(reports.length, 1, 'the merchant heard the failure once');
    });

    test(`the shopper who starts and finishes in one browser waits for nothing: shown, told and paid at once${how}`, async (t) => {
      const reports: OutcomeReport[] = [];
      // The production grace: nothing below may wait for it.
      const pair = await bindingPair(t, reports, {}, { bankStepGraceMs: 10_000 });
      const { started } = await start(pair, { saving });
      const returnUrl = await signIn(started);
      assert.match(
        new URL(returnUrl).search,
        /[?&]proof=[A-Za-z0-9_-]{43}(&|$)/,
        "the bank's redirect carries the proof",
      );
      await pair.provider.notificationsSettled();
      // Its first visit: no "Finishing…", and its page has the account.
      const back = await visit(returnUrl, started.cookie);
      assert.equal(back.status, 200);
      assert.match(back.text, COMPLETE);
      const view = await session(pair, started.sessionId);
      assert.equal(view.state, 'succeeded');
      const linkRef = view.outcome?.linkRef ?? '';
      assert.ok(linkRef);
      // The proof confirmed the step with the visit itself: the merchant has heard of it already, and the
      // payment asked at once goes through.
      assert.equal(await pair.store.readMark(markerKey.bankStep(started.sessionId)), 'confirmed');
      assert.equal(reports.length, 1, 'onOutcome once, before the payment');
      assert.equal((await pay(pair, linkRef)).status, 201);
      assert.equal(reports.length, 1, 'onOutcome once');
      assert.equal(reports[0]?.outcome.status, 'success');
      const link = (await (await readLink(pair, linkRef)).json()) as { savedAccount?: { accountId: string } };
      assert.equal(Boolean(link.savedAccount), saving, 'the account is saved only when asked');
      // The provider was acknowledged 2xx while the success was held.
      assert.ok(pair.responses.filter((r) => r.path.includes('/notifications/')).every((r) => r.status === 200));
      // A browser without the binding, after the confirmation, changes nothing.
      const stranger = await visit(returnUrl);
      assert.equal(stranger.status, 403);
      assert.match(stranger.text, /finished in another browser/);
      assert.equal((await session(pair, started.sessionId)).outcome?.linkRef, linkRef);
      assert.equal(reports.length, 1);
    });

    test(`the limit, pinned: an attacker who learned the proof (a provider that shows the returnURL) and comes back first confirms the step; the victim's return gets nothing and the operator is warned${how}`, async (t) => {
      // docs/PROXY.md "What it cannot stop": the proof is the provider's to keep. Were the payment held for
      // a grace after a proven return, this attacker would get nothing, and every honest shopper's Pay
      // would wait that grace: the shopper was chosen. This pins what happens then, and the signal.
      const reports: OutcomeReport[] = [];
      const pair = await bindingPair(t, reports);
      const { started } = await start(pair, { saving });
      const victimsReturn = await signIn(started);
      await pair.provider.notificationsSettled();
      assert.match((await visit(victimsReturn, started.cookie)).text, COMPLETE);
      assert.equal(reports.length, 1);
      const warning = "the return URL's proof came back in a browser that did not start";
      assert.deepEqual(pair.logs.find(warning), [], 'no warning for the first, proven, return');
      // The bank's redirect brings the victim's browser back: refused, and the operator is told.
      const victim = await visit(victimsReturn);
      assert.equal(victim.status, 403);
      assert.match(victim.text, /finished in another browser/);
      assert.equal(pair.logs.find(warning).length, 1);
      // A browser without the cookie and without the proof (someone who only knows the page's address) is
      // refused the same way, and no warning says the proof travelled.
      assert.equal((await visit(victimsReturn.replace(/proof=[^&]+/, `proof=${'A'.repeat(43)}`))).status, 403);
      assert.equal(pair.logs.find(warning).length, 1);
    });

    test(`the starting browser back before the provider's success: the success is shown, told and payable as it arrives${how}`, async (t) => {
      const reports: OutcomeReport[] = [];
      // The production grace: nothing below may wait for it.
      const pair = await bindingPair(t, reports, { faults: { notificationDelayMs: 300 } }, { bankStepGraceMs: 10_000 });
      const { started } = await start(pair, { saving });
      const returnUrl = await signIn(started);
      const back = await visit(returnUrl, started.cookie);
      assert.match(back.text, COMPLETE, 'nothing to finish: the page closes itself');
      assert.equal((await session(pair, started.sessionId)).outcome, undefined, 'nothing stored yet');
      await pair.provider.notificationsSettled();
      const linkRef = (await session(pair, started.sessionId)).outcome?.linkRef ?? '';
      assert.ok(linkRef, 'shown as soon as it is stored');
      // The notification's own delivery told the merchant: the step was confirmed before it came.
      assert.equal(reports.length, 1);
      assert.equal(reports[0]?.outcome.status, 'success');
      assert.equal((await pay(pair, linkRef)).status, 201);
    });

    test(`parallel bursts: the attacker's returns and the victim's all at once leave nothing usable${how}`, async (t) => {
      const reports: OutcomeReport[] = [];
      // The victim's redirect comes within the grace (a burst of 31 requests on a loaded machine takes a while).
      const pair = await bindingPair(t, reports, {}, { bankStepGraceMs: 2_000 });
      const { started } = await start(pair, { saving });
      const attackersReturn = await pair.returnUrl(started.sessionId);
      const victimsReturn = await signIn(started);
      await pair.provider.notificationsSettled();
      const burst = () => Array.from({ length: 15 }, () => visit(attackersReturn, started.cookie));
      const pages = await Promise.all([...burst(), visit(victimsReturn), ...burst()]);
      const victim = pages[15]!;
      assert.equal(victim.status, 403);
      assert.ok(
        pages.every((page) => !COMPLETE.test(page.text)),
        'no visit released anything',
      );
      // And after the grace, a second burst of the attacker's.
      await sleep(2_200);
      const later = await Promise.all(burst());
      assert.ok(later.every((page) => page.status === 403 && !COMPLETE.test(page.text)));
      await assertAttackerGetsNothing(pair, started, reports);
    });
  }

  test('a held success is acknowledged 200 and its delivery survives a restart: the other instance releases it once, from the store', async (t) => {
    const backend = createStorage({ kind: 'memory' });
    t.after(() => backend.close());
    const firstReports: OutcomeReport[] = [];
    const first = await bindingPair(t, firstReports, {}, { backend });
    const { started } = await start(first);
    const returnUrl = await signIn(started);
    await first.provider.notificationsSettled();
    const notified = first.responses.filter((r) => r.path.includes('/notifications/'));
    assert.deepEqual(
      notified.map((r) => [r.status, JSON.parse(r.body) as unknown]),
      [[200, { status: 'stored' }]],
      'one delivery, acknowledged',
    );
    assert.equal((await session(first, started.sessionId)).outcome, undefined, 'held');
    assert.deepEqual(firstReports, []);
    // A new process over the same store (the first one is never asked again).
    const reports: OutcomeReport[] = [];
    const second = await startProxy({
      providerUrl: first.provider.url,
      proxy: {
        bindBankStep: true,
        bankStepGraceMs: GRACE_MS,
        backend,
        onOutcome: (report) => void reports.push(report),
      },
    });
    t.after(() => second.close());
    const back = await returnUntilDone(
      `${second.baseUrl}${new URL(returnUrl).pathname.slice('/obv'.length)}${new URL(returnUrl).search}`,
      started.cookie,
    );
    assert.match(back.text, COMPLETE);
    const linkRef = (await session(second, started.sessionId)).outcome?.linkRef ?? '';
    assert.ok(linkRef);
    // Visited again: delivered once all the same (the merchant hears of it before the payment).
    await visit(
      `${second.baseUrl}${new URL(returnUrl).pathname.slice('/obv'.length)}${new URL(returnUrl).search}`,
      started.cookie,
    );
    assert.equal((await pay(second, linkRef)).status, 201);
    assert.equal(reports.length, 1);
  });

  test("the merchant's failing onOutcome hook never holds the shopper's return page; the payment calls it again", async (t) => {
    let calls = 0;
    const pair = await bindingPair(
      t,
      [],
      {},
      {
        onOutcome: () => {
          calls += 1;
          if (calls === 1) throw new Error('the merchant is down for a moment');
        },
      },
    );
    const { started } = await start(pair);
    const returnUrl = await signIn(started);
    await pair.provider.notificationsSettled();
    assert.equal(calls, 0, 'held until the starting browser is back');
    // The proven return runs the hook, which fails: the page is the shopper's all the same.
    const back = await visit(returnUrl, started.cookie);
    assert.match(back.text, COMPLETE);
    assert.doesNotMatch(back.text, /Finishing your bank step/);
    assert.equal(calls, 1);
    const linkRef = (await session(pair, started.sessionId)).outcome?.linkRef ?? '';
    assert.ok(linkRef);
    // The next reader finishes the merchant's part before paying.
    assert.equal((await pay(pair, linkRef)).status, 201);
    assert.equal(calls, 2);
    // The same browser again, without the URL's query: nothing waited for a grace, so nothing says so.
    assert.match((await visit(returnUrl.split('?')[0]!, started.cookie)).text, COMPLETE);
    assert.deepEqual(pair.logs.find("came back without the return URL's proof"), []);
  });

  test('a different later notification for a held success is acknowledged and ignored, not retried', async (t) => {
    const pair = await bindingPair(t);
    const { started } = await start(pair);
    await signIn(started);
    await pair.provider.notificationsSettled();
    const late = await postNotification(await pair.notificationUrl(started.sessionId), failurePayload());
    assert.equal(late.status, 200);
    assert.deepEqual(await late.json(), { status: 'ignored' });
    assert.equal((await pair.store.get(started.sessionId))?.outcome?.status, 'success', 'the first outcome stays');
  });

  test("another session's binding does not confirm this one: it is a browser that did not start it", async (t) => {
    const pair = await bindingPair(t);
    const mine = (await start(pair)).started;
    const theirs = (await start(pair)).started;
    const returnUrl = await signIn(theirs);
    await pair.provider.notificationsSettled();
    assert.equal((await visit(returnUrl, mine.cookie)).status, 403);
    assert.equal((await session(pair, theirs.sessionId)).outcome?.code, 'BANK_STEP_ELSEWHERE');
  });

  test('sandbox mode leaves it off unless asked, and then starts from anywhere as before', async (t) => {
    const pair = await startProxyPair();
    t.after(() => pair.close());
    assert.equal(pair.proxy.config.bindBankStep, false);
    const { response, started } = await start(pair, { headers: {} });
    assert.equal(response.status, 201);
    assert.equal(started.setCookie, '');
  });
});

describe('bank step binding with Redis across two instances', { skip: redisSkipReason() }, () => {
  /** Two proxies over one Redis (each with its own connections), one provider; the first one's reports. */
  async function redisPair(
    t: TestContext,
    reports: OutcomeReport[] = [],
    graceMs = GRACE_MS,
  ): Promise<{ first: ProxyPair; second: RunningProxy; redisUrl: string }> {
    const redis = await startRedisServer();
    t.after(() => redis.stop());
    const backend = () => {
      const made = createStorage({
        kind: 'redis',
        redisUrl: redis.url,
        redisPrefix: 'bind-test:',
        logger: createLogger('silent'),
      });
      t.after(() => made.close());
      return made;
    };
    const options = {
      bindBankStep: true,
      bankStepGraceMs: graceMs,
      onOutcome: (report: OutcomeReport) => void reports.push(report),
    };
    const first = await startProxyPair({ proxy: { ...options, backend: backend() } });
    t.after(() => first.close());
    const second = await startProxy({ providerUrl: first.provider.url, proxy: { ...options, backend: backend() } });
    t.after(() => second.close());
    return { first, second, redisUrl: redis.url };
  }

  /** `url` (a return page of `from`) on the other instance. */
  const on = (proxy: RunningProxy, url: string) =>
    `${proxy.baseUrl}${new URL(url).pathname.slice('/obv'.length)}${new URL(url).search}`;

  test('started on one instance, the browser comes back to the other: confirmed at once on both, paid on the first', async (t) => {
    const reports: OutcomeReport[] = [];
    const { first, second } = await redisPair(t, reports, 10_000);
    const { started } = await start(first);
    const returnUrl = await signIn(started);
    await first.provider.notificationsSettled();
    assert.equal((await session(second, started.sessionId)).outcome, undefined, 'held on every instance');
    const back = await visit(on(second, returnUrl), started.cookie);
    assert.equal(back.status, 200);
    assert.match(back.text, COMPLETE);
    for (const proxy of [first, second]) assert.ok((await session(proxy, started.sessionId)).outcome?.linkRef);
    assert.equal(reports.length, 1, 'the merchant was told by the instance the browser came back to');
    const linkRef = (await session(first, started.sessionId)).outcome?.linkRef ?? '';
    assert.equal((await pay(first, linkRef)).status, 201);
    assert.equal(reports.filter((report) => report.outcome.status === 'success').length, 1);
  });

  test('the attacker polls on one instance, the victim (carrying a cookie of their own) comes back to the other: nothing usable on either', async (t) => {
    const reports: OutcomeReport[] = [];
    const { first, second } = await redisPair(t, reports);
    const { started } = await start(first, { saving: true });
    // The victim's browser has its own binding cookie, from a checkout of its own on the second instance.
    const victimsOwn = (await start(second)).started;
    const attackersReturn = await first.returnUrl(started.sessionId);
    const seen: { status: number; text: string }[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) seen.push(await visit(attackersReturn, started.cookie));
    })();
    const victimsReturn = await signIn(started);
    await first.provider.notificationsSettled();
    assert.equal((await visit(on(second, victimsReturn), victimsOwn.cookie)).status, 403);
    await sleep(GRACE_MS * 2);
    polling = false;
    await poller;
    assert.ok(
      seen.every((page) => !COMPLETE.test(page.text)),
      'no visit of the attacker confirmed anything',
    );
    for (const proxy of [first, second])
      assert.equal((await session(proxy, started.sessionId)).outcome?.code, 'BANK_STEP_ELSEWHERE');
    assert.ok(
      reports.every((report) => report.outcome.status === 'failure'),
      JSON.stringify(reports),
    );
    const stored = await first.store.get(started.sessionId);
    assert.equal(stored?.outcome?.status, 'success');
    await first.store.mark(markerKey.linkRef(stored.outcome.linkRef), started.sessionId, 60_000);
    for (const proxy of [first, second]) assert.equal((await pay(proxy, stored.outcome.linkRef)).status, 403);
    assert.equal(first.provider.stats.transactions, 0, 'nothing was paid');
  });

  test("after a reconnect, the catch-up sends a socket nothing held for its bank step; the starting browser's return shows it", async (t) => {
    const { first, redisUrl } = await redisPair(t, [], 3_000);
    const { started } = await start(first);
    const socket = await subscribedRelay(relayUrl(first.baseUrl), first.origin, started.sessionId);
    t.after(() => socket.close());
    const returnUrl = await signIn(started);
    await first.provider.notificationsSettled();
    assert.equal((await first.store.get(started.sessionId))?.outcome?.status, 'success', 'stored, held');
    // Every instance's subscriber connection drops and comes back: each catches up from the store.
    const raw = inspector(redisUrl);
    t.after(() => raw.quit());
    const subscribers = async () =>
      String(await raw.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
        .split('\n')
        .filter(Boolean).length;
    const before = await subscribers();
    await raw.client('KILL', 'TYPE', 'pubsub');
    await eventually(async () => ((await subscribers()) === before ? true : undefined));
    await sleep(500);
    assert.deepEqual(
      socket.messages.filter((message) => message.type === 'result'),
      [],
      'the catch-up sent nothing held',
    );
    // The shopper comes back from the bank: the result reaches the socket, live.
    assert.match((await visit(returnUrl, started.cookie)).text, COMPLETE);
    const result = await socket.next((message) => message.type === 'result');
    assert.equal((result.outcome as { status: string }).status, 'success');
  });
});
