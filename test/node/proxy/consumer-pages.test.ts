// The proxy's pages in the consumer's tab: the holding page the element opens before the bank's address
// is known, the return page in the consumer's language, and the truth after a cancel at the checkout.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { startProxyPair, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { cancelSession } from '../../helpers/session-requests.ts';

describe('consumer pages of the proxy', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair();
  });
  after(() => pair.close());

  const cancel = (sessionId: string) => cancelSession(pair.baseUrl, sessionId, { origin: pair.origin });

  test('the holding page says "Connecting to your bank…" in English or Spanish, under a strict CSP without scripts', async () => {
    for (const [lang, title] of [
      ['en-US', 'Connecting to your bank…'],
      ['es-MX', 'Conectando con tu banco…'],
      ['', 'Connecting to your bank…'],
    ] as const) {
      const response = await fetch(`${pair.baseUrl}/connecting?lang=${lang}`);
      assert.equal(response.status, 200);
      const html = await response.text();
      assert.match(html, new RegExp(`<title>${title}</title>`));
      assert.match(html, new RegExp(`<html lang="${lang.startsWith('es') ? 'es' : 'en'}"`));
      // One script, a same-origin file ("Back to checkout"): nothing inline.
      assert.deepEqual(html.match(/<script[^>]*>/g), ['<script src="return-page.js" defer>']);
      assert.match(html, /<button id="back" type="button">/);
      const csp = response.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline/);
    }
  });

  test("the holding page names the shop from OBV_MERCHANT_NAME, escaped, in the shopper's language", async (t) => {
    const { startProxy } = await import('../../helpers/proxy-harness.ts');
    const named = await startProxy({
      providerUrl: pair.provider.url,
      proxy: { merchantName: 'Northwind <Roasters> & Co' },
    });
    t.after(() => named.close());
    const en = await (await fetch(`${named.baseUrl}/connecting?lang=en`)).text();
    assert.match(en, /<p>Northwind &lt;Roasters&gt; &amp; Co is sending you to your bank to link your account\./);
    const es = await (await fetch(`${named.baseUrl}/connecting?lang=es`)).text();
    assert.match(es, /<p>Northwind &lt;Roasters&gt; &amp; Co te lleva a tu banco/);
    const unnamed = await (await fetch(`${pair.baseUrl}/connecting`)).text();
    assert.match(unnamed, /<p>Your bank’s page opens here in a moment\.<\/p>/);
  });

  test("the return page speaks the verification's language", async () => {
    const { sessionId } = await pair.startVerification({ merchantTransactionId: 'order-es', language: 'es-MX' });
    const returnUrl = await pair.returnUrl(sessionId);
    const record = await pair.store.get(sessionId);
    const page = await fetch(`${returnUrl}?lang=es-MX`);
    const html = await page.text();
    assert.match(html, /<html lang="es"/);
    assert.match(html, /Paso del banco completado/);
    assert.ok(record, 'the session exists');
  });

  test("sends the verification's language in the return URL the provider gets", async () => {
    const { sessionId, consumerUrl } = await pair.startVerification({
      merchantTransactionId: 'order-es-2',
      language: 'es',
    });
    const response = await completeConsumerStep(consumerUrl);
    const location = response.headers.get('location') ?? '';
    assert.match(location, /\/return\/[A-Za-z0-9_-]+\?lang=es$/);
    assert.ok(!location.includes(sessionId));
  });

  test('a cancel at the checkout settles the session as CANCELLED, a later bank success is ignored, and the return page says cancelled', async () => {
    const { sessionId, consumerUrl } = await pair.startVerification({ merchantTransactionId: 'order-cancel' });
    const response = await cancel(sessionId);
    assert.equal(response.status, 200);
    const view = (await response.json()) as { state: string; outcome: { status: string; code: string } };
    assert.equal(view.state, 'failed');
    assert.deepEqual([view.outcome.status, view.outcome.code], ['failure', 'CANCELLED']);
    await completeConsumerStep(consumerUrl);
    const record = await pair.store.get(sessionId);
    assert.equal(record?.state, 'failed', 'the bank’s success after the cancel was not stored');
    const page = await (await fetch(await pair.returnUrl(sessionId))).text();
    assert.match(page, /Bank linking was cancelled/);
    assert.doesNotMatch(page, /Bank step complete/);
    assert.doesNotMatch(page, /data-returned/);
    // Cancelling again changes nothing; an unknown session is a 404.
    assert.equal((await cancel(sessionId)).status, 200);
    assert.equal((await cancel('x'.repeat(22))).status, 404);
  });
});
