// The demo merchant's server over plain HTTP: a strict CSP with nothing inline, production bundles, the
// merchant API key kept server-side, and the Pay form's input checked before anything is charged (its
// field, its order, and where the post comes from).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningDemo } from '../../demo/start-demo.ts';
import { startTestDemo } from './harness.ts';

const MERCHANT_API_KEY = 'test-merchant-api-key-0123456789abcdef';

/** A Pay form post as the checkout page sends it: same-origin, with the shopper's order cookie if given. */
async function postForm(
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

/** What the element sends to start linking, from the checkout's own origin, in the shopper's browser. */
function startVerification(demo: RunningDemo, cookie: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(new URL('obv/verifications', demo.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(demo.url).origin, cookie },
    body: JSON.stringify(body),
  });
}

/** A problem+json with `status` whose `errors` name exactly `paths`. */
async function expectFieldProblem(response: Response, status: number, paths: string[]): Promise<void> {
  assert.equal(response.status, status);
  assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const problem = (await response.json()) as { errors: { path: string }[] };
  assert.deepEqual(
    problem.errors.map((error) => error.path),
    paths,
  );
}

/** A new shopper's checkout: its page, its order and the order cookie its browser would send back. */
async function openOrder(
  demo: RunningDemo,
): Promise<{ html: string; orderId: string; cookie: string; linkToken: string }> {
  const response = await fetch(demo.url);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const html = await response.text();
  const orderId = /name="orderId" value="(NR-[0-9A-F]+)"/.exec(html)?.[1];
  assert.ok(orderId, 'the checkout carries its order id');
  assert.equal(cookie, `nr_order=${orderId}`, 'the order is the browser’s through its cookie');
  const linkToken = /link-token="(lt_[A-Za-z0-9_-]+)"/.exec(html)?.[1];
  assert.ok(linkToken, 'the element carries the link session the shop made for the order');
  return { html, orderId, cookie, linkToken };
}

describe('demo merchant server', () => {
  let demo: RunningDemo;

  before(async () => {
    demo = await startTestDemo({ proxy: { merchantApiKey: MERCHANT_API_KEY } });
  });

  after(async () => {
    await demo?.close();
  });

  it('serves the checkout under a strict CSP with no inline script or style', async () => {
    const response = await fetch(demo.url);
    assert.equal(response.status, 200);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    const html = await response.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'every script is a file');
    assert.doesNotMatch(html, /<style|\sstyle=/, 'every style is in a file');
    // The element's form value is the link reference: the Pay form never carries an account token.
    assert.match(html, /<obv-link-account[^>]*\bname="linkRef"[^>]*\brequired/);
    assert.doesNotMatch(html, /accountToken|account-token/);
  });

  it('opens a new order per shopper, with a link session of its own: the page carries its token and no purchase values', async () => {
    const first = await openOrder(demo);
    const second = await openOrder(demo);
    assert.notEqual(first.orderId, second.orderId, 'a visit without the order cookie is a new shopper');
    assert.notEqual(first.linkToken, second.linkToken);
    assert.doesNotMatch(first.html, /merchant-user-id=|merchant-transaction-id=|\samount=|consumer-email=/);
    // 2 × $18.50 + $32.00 = $69.00, plus 8.875 % tax ($6.12) = $75.12.
    assert.match(first.html, /Pay \$75\.12/);
  });

  it('keeps the shopper’s open order across reloads through its cookie', async () => {
    const response = await fetch(demo.url);
    const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    assert.match(cookie, /^nr_order=NR-/);
    assert.match(response.headers.get('set-cookie') ?? '', /HttpOnly/i);
    const first = /name="orderId" value="(NR-[0-9A-F]+)"/.exec(await response.text())?.[1];
    const again = await (await fetch(demo.url, { headers: { cookie } })).text();
    assert.match(again, new RegExp(`name="orderId" value="${first}"`));
  });

  it('starts a verification with the order’s own amount and shopper from the link token alone; page values beside it are refused', async () => {
    const { orderId, cookie, linkToken } = await openOrder(demo);
    const claimed = await startVerification(demo, cookie, {
      linkToken,
      merchantUserId: 'someone-else',
      amount: '0.01',
    });
    await expectFieldProblem(claimed, 400, ['merchantUserId', 'amount']);
    const response = await startVerification(demo, cookie, { linkToken });
    assert.equal(response.status, 201);
    const verifications = [...demo.provider.state.verifications.values()];
    const upstream = verifications
      .filter((v) => v.request.merchant.merchantTransactionId === orderId)
      .map((v) => v.request);
    assert.equal(upstream.length, 1, 'the provider received the one verification');
    assert.equal(upstream[0]!.transaction.amount, '75.12');
    // The shop's own id for this browser's shopper (its shopper cookie: saved accounts follow it), never the page's.
    assert.match(upstream[0]!.merchant.merchantUserId ?? '', /^shopper-[A-Za-z0-9_-]{16}$/);
    assert.equal(upstream[0]!.consumer.email, 'ada@example.com');
  });

  it("refuses a start from page values, and one without a link token, as in production: the shop's link session is required", async () => {
    const { cookie } = await openOrder(demo);
    const response = await startVerification(demo, cookie, {
      merchantUserId: 'shopper-1815',
      merchantTransactionId: 'NR-000000000000',
      amount: '75.12',
      currency: 'USD',
    });
    await expectFieldProblem(response, 400, ['merchantUserId', 'merchantTransactionId', 'amount', 'currency']);
    await expectFieldProblem(await startVerification(demo, cookie, { language: 'en' }), 400, ['linkToken']);
    const upstream = [...demo.provider.state.verifications.values()].filter(
      (v) => v.request.merchant.merchantTransactionId === 'NR-000000000000',
    );
    assert.deepEqual(upstream, [], 'nothing was sent upstream');
  });

  it('refuses a start that names another shopper’s order beside a link token', async () => {
    const mine = await openOrder(demo);
    const theirs = await openOrder(demo);
    const response = await startVerification(demo, mine.cookie, {
      linkToken: mine.linkToken,
      merchantTransactionId: theirs.orderId,
    });
    await expectFieldProblem(response, 400, ['merchantTransactionId']);
    const upstream = [...demo.provider.state.verifications.values()].filter(
      (v) => v.request.merchant.merchantTransactionId === theirs.orderId,
    );
    assert.deepEqual(upstream, [], 'nothing was sent upstream for the other order');
  });

  it('serves the element and the page script as minified production bundles', async () => {
    for (const path of ['assets/obv-link-account.js', 'assets/checkout.js']) {
      const response = await fetch(new URL(path, demo.url));
      assert.equal(response.status, 200, path);
      assert.match(response.headers.get('content-type') ?? '', /^text\/javascript/);
      const code = await response.text();
      assert.doesNotMatch(code, /@vite\/client|import\.meta\.hot|Lit is in dev mode/, `${path} is not a dev build`);
      assert.doesNotMatch(code, /\/\*\*|^\s*\/\/ /m, `${path} is minified (no comments left)`);
    }
    const bundle = await (await fetch(new URL('assets/obv-link-account.js', demo.url))).text();
    assert.match(bundle, /obv-link-account/);
  });

  it('never sends the merchant API key to the browser', async () => {
    const { html } = await openOrder(demo);
    const scripts = await Promise.all(
      ['assets/obv-link-account.js', 'assets/checkout.js'].map(async (path) =>
        (await fetch(new URL(path, demo.url))).text(),
      ),
    );
    for (const text of [html, ...scripts]) assert.ok(!text.includes(MERCHANT_API_KEY));
  });

  it('rejects a Pay form without a link reference with a problem naming the field', async () => {
    const { orderId, cookie } = await openOrder(demo);
    await expectFieldProblem(await postForm(new URL('pay', demo.url).href, { orderId }, { cookie }), 400, ['linkRef']);
  });

  it('rejects a Pay form whose order id is malformed', async () => {
    const { cookie } = await openOrder(demo);
    const response = await postForm(new URL('pay', demo.url).href, { orderId: '<script>', linkRef: 'x' }, { cookie });
    await expectFieldProblem(response, 400, ['orderId']);
  });

  it('answers 404 for an order this shop never opened', async () => {
    const { cookie } = await openOrder(demo);
    const response = await postForm(
      new URL('pay', demo.url).href,
      { orderId: 'NR-000000000000', linkRef: 'ref' },
      { cookie },
    );
    assert.equal(response.status, 404);
    assert.equal((await fetch(new URL('orders/NR-000000000000', demo.url))).status, 404);
  });

  it('refuses with 403 a Pay form for an order that is not the browser’s own, and charges nothing', async () => {
    const mine = await openOrder(demo);
    const theirs = await openOrder(demo);
    const before = demo.provider.state.transactions.size;
    for (const cookie of [mine.cookie, '']) {
      const response = await postForm(
        new URL('pay', demo.url).href,
        { orderId: theirs.orderId, linkRef: 'ref' },
        cookie ? { cookie } : {},
      );
      await expectFieldProblem(response, 403, ['orderId']);
    }
    assert.equal(demo.provider.state.transactions.size, before);
    assert.equal(
      (await fetch(new URL(`orders/${theirs.orderId}`, demo.url), { headers: { cookie: theirs.cookie } })).status,
      404,
      'the other order is still open',
    );
  });

  it('refuses with 403 a Pay form posted from another site, before reading it', async () => {
    const { orderId, cookie } = await openOrder(demo);
    const before = demo.provider.state.transactions.size;
    const foreign: Record<string, string>[] = [
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'none' },
    ];
    for (const headers of foreign) {
      const response = await postForm(
        new URL('pay', demo.url).href,
        { orderId, linkRef: 'ref' },
        { cookie, ...headers },
      );
      assert.equal(response.status, 403, JSON.stringify(headers));
      assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
    }
    // A browser too old for Sec-Fetch-* still names the page's origin.
    const oldBrowser = await fetch(new URL('pay', demo.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://attacker.example', cookie },
      body: new URLSearchParams({ orderId, linkRef: 'ref' }).toString(),
      redirect: 'manual',
    });
    assert.equal(oldBrowser.status, 403);
    assert.equal(demo.provider.state.transactions.size, before);
    assert.equal(
      (await fetch(new URL(`orders/${orderId}`, demo.url), { headers: { cookie } })).status,
      404,
      'the order is still open',
    );
  });

  it('shows a declined payment when the proxy does not know the link reference', async () => {
    const { orderId, cookie } = await openOrder(demo);
    const response = await postForm(
      new URL('pay', demo.url).href,
      { orderId, linkRef: 'ref_never_issued_by_the_proxy' },
      { cookie },
    );
    assert.equal(response.status, 303);
    const location = response.headers.get('location') ?? '';
    assert.equal(location, `/orders/${orderId}`);
    const page = await (await fetch(new URL(location, demo.url), { headers: { cookie } })).text();
    assert.match(page, /Payment not completed/);
    assert.doesNotMatch(page, /APPROVED/);
  });
});
