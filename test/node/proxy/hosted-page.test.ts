// The hosted link page's server side (link-sessions/hosted.ts, routes/hosted-page.ts): which completion
// URIs a link session may ask for, what the hosted URL is (and is not), the page's headers and contents,
// the completion redirects (status and state only), and the clear pages for unknown, expired and used links.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { configFromEnv, ConfigError, type ObvProxyOptions } from '../../../proxy/index.ts';
import {
  checkCompletionUri,
  completionRedirect,
  HOSTED_REF_PATTERN,
  linkTokenOfHostedRef,
} from '../../../proxy/link-sessions/hosted.ts';
import { linkSessionId } from '../../../proxy/link-sessions/link-sessions.ts';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { EVENTS_SECRET, startMerchantEndpoint } from '../../helpers/merchant-endpoint.ts';
import { PURCHASE, startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { CONSENT_VERSION } from '../../../proxy/words/consent.ts';

const AUTH = { authorization: `Bearer ${TEST_MERCHANT_API_KEY}`, 'content-type': 'application/json' };
const PAST_EXPIRY_MS = 45 * 60_000;

describe('hosted link page (server)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'obv-hosted-'));
  const hostedElementScript = join(dir, 'obv-link-account.js');
  writeFileSync(hostedElementScript, 'customElements.define("obv-link-account", class extends HTMLElement {});\n');
  let pair: ProxyPair;
  let clock = Date.now();
  before(async () => {
    const proxy: Partial<ObvProxyOptions> = {
      hostedElementScript,
      hostedRedirectSchemes: ['myapp', 'com.shop.app'],
      merchantName: 'Tienda <Ñandú> & Co',
      now: () => clock,
    };
    pair = await startProxyPair({ proxy });
  });
  after(async () => {
    await pair.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const createHosted = async (hosted: unknown, changes: Record<string, unknown> = {}) => {
    const body = {
      ...PURCHASE,
      merchantTransactionId: `order-${Math.random().toString(36).slice(2)}`,
      hosted,
      ...changes,
    };
    const response = await fetch(`${pair.baseUrl}/link-sessions`, {
      method: 'POST',
      headers: AUTH,
      body: JSON.stringify(body),
    });
    return {
      response,
      json: (await response.json()) as {
        linkToken?: string;
        hostedUrl?: string;
        expiresAt?: string;
        errors?: Array<{ path: string; message: string }>;
      },
    };
  };

  test('a completion URI the configuration does not allow is refused at link-session time, naming hosted.completionRedirectUri', async () => {
    for (const uri of [
      'javascript:alert(1)',
      'data:text/html,hi',
      'otherapp://linked',
      'http://shop.example/linked',
      'file:///etc/passwd',
      'https://user:pw@shop.example/',
      'https://shop.example/#frag',
      'not a uri',
      'intent://x#Intent;end',
    ]) {
      const { response, json } = await createHosted({ completionRedirectUri: uri });
      assert.equal(response.status, 400, uri);
      assert.match(response.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.deepEqual(
        json.errors?.map((error) => error.path),
        ['hosted.completionRedirectUri'],
        uri,
      );
      assert.equal(json.hostedUrl, undefined);
    }
    const { response, json } = await createHosted({ completionRedirectUri: 'https://shop.example/x', extra: 1 });
    assert.equal(response.status, 400);
    assert.deepEqual(
      json.errors?.map((error) => error.path),
      ['hosted.extra'],
    );
    // Allowed: https, a listed custom scheme (any case), and http to loopback in sandbox mode.
    for (const uri of [
      'https://shop.example/linked?order=1',
      'myapp://linked',
      'MyApp://linked',
      'com.shop.app:/callback',
      'http://127.0.0.1:9/back',
    ]) {
      assert.equal((await createHosted({ completionRedirectUri: uri })).response.status, 201, uri);
    }
  });

  test('outside sandbox mode http is refused even to loopback; the scheme list is checked at boot', () => {
    const config = { hostedRedirectSchemes: ['myapp'], sandbox: false };
    assert.throws(
      () => checkCompletionUri(config, 'http://127.0.0.1/back'),
      (error: { errors?: Array<{ path: string }> }) => error.errors?.[0]?.path === 'hosted.completionRedirectUri',
    );
    assert.doesNotThrow(() => checkCompletionUri(config, 'myapp://back'));
    const env = { OBV_SANDBOX: 'true', OBV_PUBLIC_URL: 'http://127.0.0.1:3000', OBV_BASE_URL: 'http://127.0.0.1:4000' };
    assert.deepEqual(
      configFromEnv({ ...env, OBV_HOSTED_REDIRECT_SCHEMES: 'myapp, Com.Shop.App' }).hostedRedirectSchemes,
      ['myapp', 'com.shop.app'],
    );
    for (const bad of ['javascript', 'https', 'data', 'my app', '1app']) {
      assert.throws(
        () => configFromEnv({ ...env, OBV_HOSTED_REDIRECT_SCHEMES: bad }),
        (error: unknown) =>
          error instanceof ConfigError && error.issues.some((issue) => issue.setting === 'OBV_HOSTED_REDIRECT_SCHEMES'),
        bad,
      );
    }
  });

  test('the hosted URL is opaque and on the proxy: not the link token, nor its stored id; it lives as long as the link token', async () => {
    const { response, json } = await createHosted({ completionRedirectUri: 'myapp://linked', state: 'st-1' });
    assert.equal(response.status, 201);
    const url = new URL(json.hostedUrl!);
    assert.equal(url.origin, pair.origin);
    const ref = url.pathname.split('/').pop()!;
    assert.equal(url.pathname, `/obv/hosted/${ref}`);
    assert.match(ref, HOSTED_REF_PATTERN);
    assert.ok(
      !json.hostedUrl!.includes(json.linkToken!) && !json.hostedUrl!.includes(json.linkToken!.slice(3)),
      'no link token in the URL',
    );
    assert.ok(!json.hostedUrl!.includes(linkSessionId(json.linkToken!)), 'nor the id the store keeps it under');
    assert.equal(linkTokenOfHostedRef(ref), json.linkToken, "the page gives its element the link session's token");
    const other = (await createHosted({ completionRedirectUri: 'myapp://linked' })).json;
    assert.notEqual(other.hostedUrl, json.hostedUrl);
    // Without `hosted`, no page.
    assert.equal((await createHosted(undefined)).json.hostedUrl, undefined);
  });

  test('the page: shop name, amount, language, the element with the link token in its body, strict CSP, SRI, no-referrer, no-store', async () => {
    const { json } = await createHosted(
      { completionRedirectUri: 'https://shop.example/done?order=7', state: 'a/b+c' },
      { language: 'es-MX', amount: '1234.50', currency: 'EUR' },
    );
    const page = await fetch(json.hostedUrl!);
    assert.equal(page.status, 200);
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self';/);
    assert.match(csp, /default-src 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(page.headers.get('cache-control'), 'no-store');
    const html = await page.text();
    assert.match(html, /<html lang="es">/);
    assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
    assert.match(html, /Tienda &lt;Ñandú&gt; &amp; Co te pide vincular una cuenta bancaria/);
    assert.match(html, /€1,234\.50|EUR\s?1,234\.50/, "a US shopper's amount, in Spanish too (es-US)");
    assert.match(html, new RegExp(`link-token="${json.linkToken}"`));
    assert.match(html, /language="es-MX"/);
    assert.doesNotMatch(html, /<script>|<script [^>]*>[^<]/, 'no inline script');
    // The element's file is the configured bundle, named by its hash, with its SRI value.
    const [, src, integrity] =
      /<script type="module" src="([^"]+)" integrity="([^"]+)" crossorigin="anonymous">/.exec(html) ?? [];
    const bundle = readFileSync(hostedElementScript);
    assert.equal(integrity, `sha384-${createHash('sha384').update(bundle).digest('base64')}`);
    const served = await fetch(new URL(src!, pair.origin));
    assert.equal(served.status, 200);
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), bundle);
    assert.match(served.headers.get('cache-control') ?? '', /immutable/);
    assert.equal((await fetch(`${pair.baseUrl}/assets/obv-link-account.0000000000.js`)).status, 404);
    const script = await fetch(`${pair.baseUrl}/hosted-page.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /javascript/);
    // One completion URL per status: the merchant's own query kept, status and state added, nothing else.
    for (const status of ['linked', 'failed', 'cancelled', 'expired']) {
      const target = new URL(
        /data-[a-z]+="([^"]+)"/.exec(html.slice(html.indexOf(`data-${status}=`)))![1]!.replaceAll('&amp;', '&'),
      );
      assert.equal(target.origin + target.pathname, 'https://shop.example/done');
      assert.deepEqual(
        [...target.searchParams.entries()],
        [
          ['order', '7'],
          ['status', status],
          ['state', 'a/b+c'],
        ],
      );
    }
  });

  test('the completion redirect carries status and state only: no token, sealed string, session id or link reference', () => {
    const linkToken = `lt_${'x'.repeat(32)}`;
    const target = completionRedirect({ completionRedirectUri: 'myapp://linked', state: 'mine' }, 'linked');
    assert.equal(target, 'myapp://linked?status=linked&state=mine');
    assert.ok(!target.includes(linkToken));
  });

  test("an unknown, expired or used hosted URL shows a clear page in the shopper's language (404/410 HTML), never a stack", async () => {
    const unknown = await fetch(`${pair.baseUrl}/hosted/hl_${'A'.repeat(32)}`, {
      headers: { 'accept-language': 'es-ES,es;q=0.9' },
    });
    assert.equal(unknown.status, 404);
    assert.match(unknown.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await unknown.text(), /Enlace no reconocido/);
    const malformed = await fetch(`${pair.baseUrl}/hosted/${encodeURIComponent('<script>')}`);
    assert.equal(malformed.status, 404);
    const malformedHtml = await malformed.text();
    assert.match(malformedHtml, /Link not recognized/);
    assert.doesNotMatch(malformedHtml, /<script>|at .*\.ts:\d+/);
    // Expired: the link session's time is up (its record kept a grace): 410, in its language.
    const expiring = (await createHosted({ completionRedirectUri: 'myapp://x' }, { language: 'es' })).json;
    clock += PAST_EXPIRY_MS;
    try {
      const expired = await fetch(expiring.hostedUrl!);
      assert.equal(expired.status, 410);
      assert.equal(expired.headers.get('cache-control'), 'no-store');
      const text = await expired.text();
      assert.match(text, /Este enlace bancario caducó/);
      assert.ok(!text.includes(expiring.linkToken!), 'an expired page carries no token');
    } finally {
      clock -= PAST_EXPIRY_MS;
    }
    // Used: the order was paid.
    const used = (await createHosted({ completionRedirectUri: 'myapp://x' })).json;
    const ref = new URL(used.hostedUrl!).pathname.split('/').pop()!;
    const started = await pair.startWith({ linkToken: linkTokenOfHostedRef(ref) });
    await completeConsumerStep(started.consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const view = (await (
      await fetch(`${pair.baseUrl}/sessions/lookup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: pair.origin },
        body: JSON.stringify({ sessionId: started.sessionId }),
      })
    ).json()) as { outcome: { linkRef: string } };
    const record = await pair.store.get(started.sessionId);
    const paid = await pair.proxy.pay({
      linkRef: view.outcome.linkRef,
      merchantTransactionId: record!.merchantTransactionId!,
      amount: PURCHASE.amount,
      currency: PURCHASE.currency,
      merchantUserId: PURCHASE.merchantUserId,
    });
    assert.ok(paid);
    const usedPage = await fetch(used.hostedUrl!);
    assert.equal(usedPage.status, 410);
    assert.match(await usedPage.text(), /This bank link has been used/);
  });
});

describe('hosted link page: a shopper who never comes back', () => {
  test('a verification started from the hosted page and abandoned (bank step bound) ends with its one link.expired event', async () => {
    const endpoint = await startMerchantEndpoint();
    const pair = await startProxyPair({
      proxy: {
        bindBankStep: true,
        sessionTtlMs: 500,
        bankStepGraceMs: 100,
        eventsUrl: endpoint.url,
        eventsSecrets: [EVENTS_SECRET],
        eventTimings: {
          retryDelaysMs: [50],
          attemptTimeoutMs: 500,
          pollIntervalMs: 25,
          leaseMs: 2_000,
          sessionCheckDelayMs: 20,
        },
      },
    });
    try {
      const created = await fetch(`${pair.baseUrl}/link-sessions`, {
        method: 'POST',
        headers: AUTH,
        body: JSON.stringify({
          ...PURCHASE,
          merchantTransactionId: 'order-abandoned',
          hosted: { completionRedirectUri: 'https://shop.example/back' },
        }),
      });
      const { hostedUrl } = (await created.json()) as { hostedUrl: string };
      // What the page's element does: start with the page's link token, from the proxy's own origin (the binding cookie set).
      const started = await fetch(`${pair.baseUrl}/verifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: pair.origin },
        body: JSON.stringify({ linkToken: linkTokenOfHostedRef(new URL(hostedUrl).pathname.split('/').pop()!) }),
      });
      assert.equal(started.status, 201);
      assert.match(
        started.headers.get('set-cookie') ?? '',
        /Path=\/obv/i,
        "the binding cookie at the mount path, as for any page of the proxy's origin",
      );
      // The shopper closes the app and never comes back.
      const [event] = await endpoint.waitForDistinct(1, 10_000);
      assert.equal(event?.type, 'link.expired');
      assert.equal(event?.data.merchantTransactionId, 'order-abandoned');
      assert.equal(event?.data.hosted, true, "a hosted session's events say so");
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(new Set(endpoint.events.map((seen) => seen.id)).size, 1, 'one event');
    } finally {
      await pair.close();
      await endpoint.close();
    }
  });
});

describe('a forwarded hosted link (issue 39 §3)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'obv-hosted-fwd-'));
  const hostedElementScript = join(dir, 'obv-link-account.js');
  writeFileSync(hostedElementScript, 'customElements.define("obv-link-account", class extends HTMLElement {});\n');
  let pair: ProxyPair;
  let endpoint: Awaited<ReturnType<typeof startMerchantEndpoint>>;
  before(async () => {
    endpoint = await startMerchantEndpoint();
    pair = await startProxyPair({
      proxy: {
        hostedElementScript,
        merchantName: 'Staging Shop',
        eventsUrl: endpoint.url,
        eventsSecrets: [EVENTS_SECRET],
        eventTimings: {
          retryDelaysMs: [50],
          attemptTimeoutMs: 500,
          pollIntervalMs: 25,
          leaseMs: 2_000,
          sessionCheckDelayMs: 20,
        },
      },
    });
  });
  after(async () => {
    await pair.close();
    await endpoint.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const forwarded = async (
    order: string,
    changes: Record<string, unknown> = {},
    hosted: Record<string, unknown> = {},
  ) => {
    const response = await fetch(`${pair.baseUrl}/link-sessions`, {
      method: 'POST',
      headers: AUTH,
      body: JSON.stringify({
        ...PURCHASE,
        merchantTransactionId: order,
        hosted: { completionRedirectUri: 'https://shop.example/back', ...hosted },
        ...changes,
      }),
    });
    const json = (await response.json()) as { hostedUrl?: string; errors?: Array<{ path: string }> };
    return {
      response,
      json,
      linkToken: json.hostedUrl ? linkTokenOfHostedRef(new URL(json.hostedUrl).pathname.split('/').pop()!) : '',
    };
  };
  const post = (path: string, body: unknown) =>
    fetch(`${pair.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: pair.origin },
      body: JSON.stringify(body),
    });
  /** The person the link was forwarded to signs in at the bank; the order's link.succeeded event. */
  const linkAtBank = async (linkToken: string, order: string, consent?: string) => {
    const started = await post('/verifications', { linkToken, ...(consent ? { consent } : {}) });
    assert.equal(started.status, 201, await started.clone().text());
    await completeConsumerStep(((await started.json()) as { consumerUrl: string }).consumerUrl, 'good');
    const events = await endpoint.waitForDistinct(new Set(endpoint.events.map((seen) => seen.id)).size + 1, 10_000);
    const event = events.find((seen) => seen.type === 'link.succeeded' && seen.data.merchantTransactionId === order);
    assert.ok(event, 'link.succeeded');
    return event;
  };

  test('the page names whose order it is (masked) before the bank step, and who the amount is for', async () => {
    const { json } = await forwarded('order-fwd-page');
    const html = await (await fetch(json.hostedUrl!)).text();
    assert.match(html, /Order for Ada L\. · a•••@example\.com/);
    assert.match(html, /Not you\? Close this page/);
    assert.ok(html.indexOf('Order for') < html.indexOf('<obv-link-account'), 'before the element (the bank step)');
    for (const clear of ['Lovelace', 'ada@example.com'])
      assert.ok(!html.includes(clear), `${clear} is not on the page`);
  });

  test('saving is off by default for a hosted link session: allowSaving alone is refused, no consent box, no saved account', async () => {
    const refused = await forwarded('order-fwd-refused', { allowSaving: true });
    assert.equal(refused.response.status, 400);
    assert.deepEqual(
      refused.json.errors?.map((error) => error.path),
      ['allowSaving'],
    );

    const { linkToken } = await forwarded('order-fwd-nosave');
    const offer = (await (await post('/saved-accounts/offer', { linkToken })).json()) as { saving?: unknown };
    assert.equal(offer.saving, undefined, 'no consent box');
    const withConsent = await post('/verifications', { linkToken, consent: CONSENT_VERSION });
    assert.equal(withConsent.status, 400, 'a consent sent anyway is refused');
    const event = await linkAtBank(linkToken, 'order-fwd-nosave');
    assert.equal(event.data.savedAccount, undefined, 'nothing saved for the forwarder');
    assert.equal(event.data.hosted, true, 'the event says it came from a hosted page');
  });

  test('with hosted.allowSaving, the consent words name whose purchases the account is saved for, and the record keeps them', async () => {
    const { linkToken } = await forwarded('order-fwd-save', { allowSaving: true }, { allowSaving: true });
    const offer = (await (await post('/saved-accounts/offer', { linkToken })).json()) as { saving?: { text: string } };
    assert.match(
      offer.saving?.text ?? '',
      /^The account is saved for Ada L\. · a•••@example\.com and pays their future purchases: tick this only if that is you\. You authorize Staging Shop/,
    );
    const event = await linkAtBank(linkToken, 'order-fwd-save', CONSENT_VERSION);
    const saved = event.data.savedAccount as { consent?: { text: string } } | undefined;
    assert.match(
      saved?.consent?.text ?? '',
      /saved for Ada L\. · a•••@example\.com/,
      'the consent record holds the words shown',
    );
    assert.equal(event.data.hosted, true);
  });

  test('a checkout link session (not hosted) keeps its words and events as they were', async () => {
    const created = await fetch(`${pair.baseUrl}/link-sessions`, {
      method: 'POST',
      headers: AUTH,
      body: JSON.stringify({ ...PURCHASE, merchantTransactionId: 'order-fwd-checkout', allowSaving: true }),
    });
    const { linkToken } = (await created.json()) as { linkToken: string };
    const offer = (await (await post('/saved-accounts/offer', { linkToken })).json()) as { saving?: { text: string } };
    assert.match(offer.saving?.text ?? '', /^You authorize Staging Shop/);
    const event = await linkAtBank(linkToken, 'order-fwd-checkout');
    assert.equal(event.data.hosted, undefined);
  });
});
