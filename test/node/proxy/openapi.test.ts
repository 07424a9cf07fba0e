// The OpenAPI document ({mount}/openapi.json, dist/openapi.json) against the code: every mounted route
// has an entry and every entry a route, and every answer a proxy gave in a run against the sandbox —
// successes and problems, to the browser, the merchant's server and the provider — matches it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { proxyOpenApiDocument } from '../../../proxy/routes/operations.ts';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { EVENTS_SECRET, startMerchantEndpoint, type MerchantEndpoint } from '../../helpers/merchant-endpoint.ts';
import { mountedRoutes, responseChecker } from '../../helpers/openapi.ts';
import { PURCHASE, startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair } from '../../helpers/proxy-harness.ts';

const AUTH = { authorization: `Bearer ${TEST_MERCHANT_API_KEY}` };
const JSON_TYPE = { 'content-type': 'application/json' };

describe('OpenAPI document', () => {
  let pair: ProxyPair;
  let merchant: MerchantEndpoint;
  // The hosted page's element: any file will do for the document (the browser tests serve the real build).
  const elementDir = mkdtempSync(join(tmpdir(), 'obv-openapi-element-'));
  const hostedElementScript = join(elementDir, 'obv-link-account.js');
  writeFileSync(hostedElementScript, 'export {};\n');
  before(async () => {
    // Every optional route on: the merchant API key (the harness sets it) and merchant events.
    merchant = await startMerchantEndpoint();
    pair = await startProxyPair({
      proxy: { eventsUrl: merchant.url, eventsSecrets: [EVENTS_SECRET], hostedElementScript },
    });
  });
  after(async () => {
    await pair.close();
    await merchant.close();
    rmSync(elementDir, { recursive: true, force: true });
  });

  test('every route the proxy mounts has a document entry, and every entry a route', () => {
    const document = proxyOpenApiDocument('/obv');
    const documented = Object.entries(document.paths as Record<string, object>)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    assert.deepEqual(mountedRoutes(pair.proxy.router), documented);
  });

  test('every schema in the document compiles as JSON Schema 2020-12, and each operation is named once', () => {
    const checker = responseChecker(proxyOpenApiDocument('/obv'), '/obv');
    const ids = checker.operationIds();
    assert.equal(new Set(ids).size, ids.length);
  });

  test("GET {mount}/openapi.json serves the document, its server being the proxy's public URL and mount path", async () => {
    const response = await fetch(`${pair.baseUrl}/openapi.json`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    const served = (await response.json()) as { openapi: string; servers: { url: string }[] };
    assert.equal(served.openapi, '3.1.1');
    assert.deepEqual(served, proxyOpenApiDocument(pair.baseUrl));
  });

  test('an answer that drifts from its schema fails the check (a session view carrying the accountToken)', () => {
    const checker = responseChecker(proxyOpenApiDocument('/obv'), '/obv');
    const view = {
      sessionId: 'AAAAAAAAAAAAAAAAAAAAAA',
      state: 'succeeded',
      expiresAt: new Date().toISOString(),
      outcome: {
        status: 'success',
        linkRef: 'BBBBBBBBBBBBBBBBBBBBBB',
        accountLabel: 'x',
        fiName: 'y',
        fiAccountType: 'z',
        displayLabel: 'x',
        spokenLabel: 'x',
      },
    };
    const exchange = {
      method: 'POST',
      path: '/obv/sessions/lookup',
      status: 200,
      contentType: 'application/json; charset=utf-8',
    };
    assert.deepEqual(checker.check({ ...exchange, body: JSON.stringify(view) }).errors, []);
    const leaking = { ...view, outcome: { ...view.outcome, accountToken: 'tok_1' } };
    assert.notDeepEqual(checker.check({ ...exchange, body: JSON.stringify(leaking) }).errors, []);
    assert.notDeepEqual(
      checker.check({ ...exchange, status: 418, body: JSON.stringify(view) }).errors,
      [],
      'an undocumented status',
    );
    assert.notDeepEqual(
      checker.check({ ...exchange, contentType: 'text/plain', body: 'x' }).errors,
      [],
      'an undocumented content type',
    );
  });

  test('every answer of every route in a run against the sandbox matches the document, successes and problems', async () => {
    const { baseUrl, origin } = pair;
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { ...JSON_TYPE, origin, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    const get = (path: string, headers: Record<string, string> = {}) => fetch(`${baseUrl}${path}`, { headers });
    const lookup = (sessionId: string) => post('/sessions/lookup', { sessionId });
    const statuses = async (...responses: Promise<Response>[]) =>
      Promise.all(responses.map(async (r) => (await r).status));

    // The browser's routes.
    const linked = await pair.startVerification({ merchantTransactionId: 'order-openapi-1' });
    assert.deepEqual(
      await statuses(lookup(linked.sessionId), get('/connecting?lang=es'), get('/return-page.js')),
      [200, 200, 200],
    );
    assert.equal((await completeConsumerStep(linked.consumerUrl, 'good')).status, 303);
    const failed = await pair.startVerification({ merchantTransactionId: 'order-openapi-2' });
    await completeConsumerStep(failed.consumerUrl, 'notVerified');
    await pair.provider.notificationsSettled();
    const cancelled = await pair.startVerification({ merchantTransactionId: 'order-openapi-3' });
    const returnUrl = await pair.returnUrl(linked.sessionId);
    assert.deepEqual(
      await statuses(
        lookup(linked.sessionId),
        lookup(failed.sessionId),
        post('/sessions/cancel', { sessionId: cancelled.sessionId }),
        fetch(`${returnUrl}?lang=en`, { headers: { accept: 'text/html' } }),
      ),
      [200, 200, 200, 200],
    );
    const view = (await (await lookup(linked.sessionId)).json()) as { outcome: { linkRef: string } };
    const { linkRef } = view.outcome;
    const linkToken = await pair.createLinkSession();
    assert.deepEqual(
      await statuses(
        post('/verifications', { amount: '-1' }),
        post('/verifications', { language: 'en' }),
        post('/verifications', 'not json'),
        post('/verifications', 'x', { 'content-type': 'text/plain' }),
        post('/verifications', { dataPassThrough: 'x'.repeat(40_000) }),
        post('/verifications', { linkToken }, { origin: 'https://elsewhere.example' }),
        lookup('AAAAAAAAAAAAAAAAAAAAAA'),
        post('/sessions/cancel', { sessionId: 'AAAAAAAAAAAAAAAAAAAAAA' }),
        post('/sessions/lookup', { sessionId: 'short' }),
        get('/return/AAAAAAAAAAAAAAAAAAAAAA', { accept: 'text/html' }),
        get('/return/AAAAAAAAAAAAAAAAAAAAAA', { accept: 'application/json' }),
      ),
      [400, 400, 400, 415, 413, 403, 404, 404, 400, 404, 404],
    );
    assert.equal((await post('/verifications', { linkToken }, { 'idempotency-key': 'openapi-key' })).status, 201);
    assert.equal(
      (
        await post(
          '/verifications',
          { linkToken: await pair.createLinkSession() },
          { 'idempotency-key': 'openapi-key' },
        )
      ).status,
      422,
    );

    // The provider's route (its own deliveries above are recorded too).
    assert.equal((await post(`/notifications/${linked.sessionId}`, { verificationStatus: 'SUCCESS' })).status, 401);

    // The merchant server's routes.
    const linkSession = { ...PURCHASE, merchantTransactionId: 'order-openapi-4', consumer: PURCHASE.consumer };
    const created = await post('/link-sessions', linkSession, AUTH);
    assert.equal(created.status, 201);
    const made = (await created.json()) as { linkToken: string };
    assert.deepEqual(
      await statuses(
        post('/link-sessions', { ...linkSession, amount: 'free' }, AUTH),
        post('/link-sessions', linkSession),
        post('/verifications', { linkToken: made.linkToken }),
        post('/verifications', { linkToken: `lt_${'A'.repeat(32)}` }),
        post('/verifications', { linkToken: made.linkToken, amount: '1.00' }),
      ),
      [400, 401, 201, 404, 400],
    );
    // Returning shoppers: a consented link saves the account; a later link session offers it, the shopper
    // uses it at once, and another removes it.
    const saving = (await (
      await post(
        '/link-sessions',
        { ...linkSession, merchantTransactionId: 'order-openapi-5', allowSaving: true },
        AUTH,
      )
    ).json()) as { linkToken: string };
    const offer = (await (await post('/saved-accounts/offer', { linkToken: saving.linkToken })).json()) as {
      saving: { version: string };
    };
    const consented = (await (
      await post('/verifications', { linkToken: saving.linkToken, consent: offer.saving.version })
    ).json()) as { sessionId: string; consumerUrl: string };
    await completeConsumerStep(consented.consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const savedRef = ((await (await lookup(consented.sessionId)).json()) as { outcome: { linkRef: string } }).outcome
      .linkRef;
    // The hosted link page: the page, its script, the element, an unknown page, a refused completion URI.
    const hosted = { completionRedirectUri: 'https://shop.example/linked' };
    const { hostedUrl } = (await (
      await post('/link-sessions', { ...linkSession, merchantTransactionId: 'order-openapi-6', hosted }, AUTH)
    ).json()) as { hostedUrl: string };
    const hostedPage = await fetch(hostedUrl);
    const elementSrc = /src="([^"]*\/assets\/[^"]+)"/.exec(await hostedPage.text())?.[1] ?? '';
    assert.deepEqual(
      [
        hostedPage.status,
        ...(await statuses(
          fetch(new URL(elementSrc, baseUrl)),
          get('/hosted-page.js'),
          get(`/hosted/hl_${'A'.repeat(32)}`),
          post(
            '/link-sessions',
            {
              ...linkSession,
              merchantTransactionId: 'order-openapi-7',
              hosted: { completionRedirectUri: 'javascript:alert(1)' },
            },
            AUTH,
          ),
        )),
      ],
      [200, 200, 200, 404, 400],
    );
    const { savedAccount } = (await (await get(`/links/${savedRef}`, AUTH)).json()) as {
      savedAccount: { sealed: string };
    };
    const returning = async (order: string) => {
      const { linkToken: token } = (await (
        await post(
          '/link-sessions',
          { ...linkSession, merchantTransactionId: order, savedAccounts: [savedAccount.sealed] },
          AUTH,
        )
      ).json()) as { linkToken: string };
      const { accounts } = (await (await post('/saved-accounts/offer', { linkToken: token })).json()) as {
        accounts: { id: string }[];
      };
      return { linkToken: token, savedAccountId: accounts[0]!.id };
    };
    assert.deepEqual(
      await statuses(
        post('/saved-accounts/use', await returning('order-openapi-6')),
        post('/saved-accounts/remove', await returning('order-openapi-7')),
        post('/saved-accounts/use', { linkToken: saving.linkToken, savedAccountId: 'AAAAAAAAAAAAAAAAAAAAAA' }),
        post('/saved-accounts/offer', { linkToken: `lt_${'A'.repeat(32)}` }),
        post('/saved-accounts/confirm', { linkRef }),
        post('/saved-accounts/confirm', { linkRef: 'A'.repeat(22) }),
      ),
      [201, 204, 404, 404, 204, 404],
    );

    const payment = {
      linkRef,
      merchantUserId: PURCHASE.merchantUserId,
      merchantTransactionId: 'order-openapi-1',
      amount: PURCHASE.amount,
      currency: PURCHASE.currency,
    };
    assert.deepEqual(
      await statuses(
        get(`/links/${linkRef}`, AUTH),
        get('/links/AAAAAAAAAAAAAAAAAAAAAA', AUTH),
        get(`/links/${linkRef}`),
        post('/transactions', payment),
        post('/transactions', { ...payment, merchantUserId: '' }, AUTH),
        post('/transactions', { ...payment, linkRef: 'AAAAAAAAAAAAAAAAAAAAAA' }, AUTH),
        post('/transactions', { ...payment, amount: '1.00' }, AUTH),
      ),
      [200, 404, 401, 401, 400, 404, 422],
    );
    assert.equal((await post('/transactions', payment, AUTH)).status, 201);
    assert.equal((await post('/transactions', payment, AUTH)).status, 409);
    assert.deepEqual(
      await statuses(
        get('/transactions/order-openapi-1', AUTH),
        get('/transactions/order-never-paid', AUTH),
        get('/transactions/order-openapi-1'),
      ),
      [200, 404, 401],
    );
    const { paymentId } = (await (await get('/transactions/order-openapi-1', AUTH)).json()) as { paymentId: string };
    assert.deepEqual(
      await statuses(
        post('/transactions/order-openapi-1/reconcile', { paymentId, result: 'not-charged' }, AUTH),
        post('/transactions/order-openapi-1/reconcile', { paymentId: 'pay_other', result: 'paid' }, AUTH),
        post('/transactions/order-openapi-1/reconcile', { paymentId, result: 'maybe' }, AUTH),
        post('/transactions/order-openapi-1/reconcile', { paymentId, result: 'paid' }),
      ),
      [409, 404, 400, 401],
    );

    const events = (await (await get('/events?limit=100', AUTH)).json()) as { events: { id: string }[] };
    assert.ok(events.events.length >= 3, 'link.succeeded, link.failed, link.cancelled at least');
    assert.deepEqual(
      await statuses(
        get(`/events?after=${events.events[0]!.id}&limit=1`, AUTH),
        get('/events?limit=0', AUTH),
        get(`/events?after=evt_${'A'.repeat(22)}`, AUTH),
        get('/events'),
      ),
      [200, 400, 400, 401],
    );
    const unknownEvent = `evt_${'A'.repeat(22)}`;
    const firstEvent = events.events[0]!.id;
    // Sequential: the acknowledgement and the redelivery of one event, in this order.
    const reconciling = [];
    for (const request of [
      () => get('/events?delivery=undelivered', AUTH),
      () => get('/events?delivery=everything', AUTH),
      () => post(`/events/${firstEvent}/ack`, '', AUTH),
      () => post(`/events/${unknownEvent}/ack`, '', AUTH),
      () => post('/events/nope/ack', '', AUTH),
      () => post(`/events/${firstEvent}/ack`, ''),
      () => post(`/events/${firstEvent}/redeliver`, '', AUTH),
      () => post(`/events/${unknownEvent}/redeliver`, '', AUTH),
      () => post(`/events/${firstEvent}/redeliver`, ''),
    ]) {
      const response = await request();
      await response.arrayBuffer();
      reconciling.push(response.status);
    }
    assert.deepEqual(reconciling, [200, 400, 200, 404, 400, 401, 202, 404, 401]);
    // Forgetting a user who has nothing here: the counts (all 0), a bad id, no key.
    const forget = (id: string, headers: Record<string, string> = {}) =>
      fetch(`${baseUrl}/users/${id}`, { method: 'DELETE', headers });
    assert.deepEqual(
      await statuses(forget('user-openapi-nobody', AUTH), forget('%20', AUTH), forget('user-openapi-nobody')),
      [200, 400, 401],
    );
    // What the merchant's endpoint received matches the document's webhook.
    await merchant.waitForDistinct(events.events.length);
    // One checker: building one compiles every schema, long enough (under load) to outlast a kept-alive socket.
    const webhooks = responseChecker(proxyOpenApiDocument(baseUrl), '/obv');
    assert.deepEqual(
      merchant.deliveries.flatMap((delivery) => webhooks.checkWebhook('merchantEvent', delivery.body)),
      [],
    );

    // Operations.
    assert.deepEqual(await statuses(get('/healthz'), get('/readyz'), get('/openapi.json')), [200, 200, 200]);
    await pair.proxy.drain();
    assert.equal((await get('/readyz')).status, 503);

    const checker = responseChecker(proxyOpenApiDocument(baseUrl), pair.proxy.mountPath);
    const mine = pair.responses.filter((exchange) => exchange.path.startsWith(`${pair.proxy.mountPath}/`));
    const checked = mine.map((exchange) => ({ exchange, ...checker.check(exchange) }));
    assert.deepEqual(
      checked.flatMap((c) => c.errors),
      [],
    );
    // Each operation answered at least once, and the problems above were all seen.
    assert.deepEqual([...new Set(checked.map((c) => c.operationId))].sort(), checker.operationIds().sort());
    const problems = new Set(
      checked
        .filter((c) => c.exchange.contentType.startsWith('application/problem+json'))
        .map((c) => `${c.operationId} ${c.exchange.status}`),
    );
    for (const expected of [
      'startVerification 400',
      'startVerification 403',
      'startVerification 413',
      'startVerification 415',
      'startVerification 422',
      'lookupSession 404',
      'lookupSession 400',
      'cancelSession 404',
      'returnPage 404',
      'receiveNotification 401',
      'getLinkedAccount 401',
      'getLinkedAccount 404',
      'submitTransaction 400',
      'submitTransaction 401',
      'submitTransaction 404',
      'submitTransaction 409',
      'submitTransaction 422',
      'createLinkSession 400',
      'createLinkSession 401',
      'startVerification 404',
      'getPayment 401',
      'getPayment 404',
      'listEvents 400',
      'listEvents 401',
      'acknowledgeEvent 400',
      'acknowledgeEvent 401',
      'acknowledgeEvent 404',
      'redeliverEvent 401',
      'redeliverEvent 404',
      'useSavedAccount 404',
      'offerSavedAccounts 404',
      'confirmSavedAccount 404',
    ]) {
      assert.ok(problems.has(expected), `a problem answer checked: ${expected}`);
    }
    assert.ok(
      checked.some((c) => c.operationId === 'receiveNotification' && c.exchange.status === 200),
      "the provider's deliveries were checked",
    );
    // No answer a cache may keep but the proxy's static files: every other one may carry a session id, a
    // reference, a link token or an order (issue 39 §5: POST /verifications answered without no-store).
    const cacheable = new Set(['openApiDocument', 'hostedPageScript', 'hostedElementScript', 'returnPageScript']);
    const stored = checked.filter((c) => !cacheable.has(c.operationId ?? '') && c.exchange.cacheControl !== 'no-store');
    assert.deepEqual(
      stored.map(
        (c) => `${c.exchange.method} ${c.exchange.path} ${c.exchange.status}: ${c.exchange.cacheControl || '(none)'}`,
      ),
      [],
    );
    assert.ok(
      checked.some(
        (c) =>
          c.operationId === 'startVerification' && c.exchange.status === 201 && c.exchange.cacheControl === 'no-store',
      ),
    );
  });
});

describe('OpenAPI document with the bank step bound to the starting browser', () => {
  test("the binding's answers match the document: a start it cannot bind, the starting browser's \"Finishing…\", another browser's return page", async () => {
    const pair = await startProxyPair({ proxy: { bindBankStep: true } });
    try {
      const start = async (headers: Record<string, string>) =>
        fetch(`${pair.baseUrl}/verifications`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: pair.origin, ...headers },
          body: JSON.stringify({ linkToken: await pair.createLinkSession() }),
        });
      assert.equal((await start({ 'sec-fetch-site': 'same-site' })).status, 403);
      const started = await start({ 'sec-fetch-site': 'same-origin' });
      assert.equal(started.status, 201);
      const { sessionId, consumerUrl } = (await started.json()) as { sessionId: string; consumerUrl: string };
      const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0]!;
      await completeConsumerStep(consumerUrl, 'good');
      await pair.provider.notificationsSettled();
      // The starting browser inside the grace: "Finishing…"; then one without its cookie: refused, nothing released.
      assert.equal(
        (await fetch(await pair.returnUrl(sessionId), { headers: { accept: 'text/html', cookie } })).status,
        200,
      );
      assert.equal((await fetch(await pair.returnUrl(sessionId), { headers: { accept: 'text/html' } })).status, 403);

      const checker = responseChecker(proxyOpenApiDocument(pair.baseUrl), pair.proxy.mountPath);
      const checked = pair.responses
        .filter((exchange) => exchange.path.startsWith(`${pair.proxy.mountPath}/`))
        .map((exchange) => ({ exchange, ...checker.check(exchange) }));
      assert.deepEqual(
        checked.flatMap((c) => c.errors),
        [],
      );
      const seen = new Set(checked.map((c) => `${c.operationId} ${c.exchange.status}`));
      for (const expected of ['startVerification 403', 'returnPage 200', 'returnPage 403', 'receiveNotification 200'])
        assert.ok(seen.has(expected), `checked: ${expected}`);
    } finally {
      await pair.close();
    }
  });
});
