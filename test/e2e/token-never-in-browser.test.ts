// The browser never holds the accountToken (issue 10), end to end in Chromium. A consumer links an
// account at the sandbox bank and pays while the test records everything the browser can see: every
// HTTP request and response of every tab, every WebSocket frame, every obv-* event, the DOM with the
// element's shadow root, storage, the form's data and the BroadcastChannel messages. The token the
// provider issued, read server side, must be in none of it; the session id (which reads the outcome)
// must never reach the provider or the bank's tab. Then the Pay form's own guards: a post from another
// site, a post for another shopper's order, and a receipt whose account comes from the server.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page, Request, Response, WebSocket } from 'playwright-core';
import type { RunningDemo } from '../../demo/start-demo.ts';
import {
  STEP_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  element,
  launchChromium,
  pay,
  payButton,
  saveScreenshot,
  signInAtBank,
  startLinking,
  startTestDemo,
  waitForState,
  withShopper,
} from './harness.ts';

/** Known to the test so it can read the linked account as the merchant's server does (GET /obv/links). */
const MERCHANT_API_KEY = 'test-merchant-api-key-token-never-in-browser';

/** One thing the browser saw or sent, labelled by where it was seen (for the failure message). */
interface Seen {
  channel:
    'http' | 'websocket-received' | 'websocket-sent' | 'event' | 'dom' | 'storage' | 'form' | 'broadcast' | 'console';
  where: string;
  text: string;
}

/** What the init script collects inside each page, read back with `page.evaluate`. */
interface PageRecord {
  events: { type: string; detail: string }[];
  broadcasts: string[];
  storageWrites: string[];
}

declare global {
  interface Window {
    __obvRecord?: PageRecord;
  }
}

/**
 * Runs in every page of the context before the page's scripts: records every obv-* event (whatever
 * element dispatches it, bubbling or not), every BroadcastChannel('obv-link') message this page can
 * receive, and every storage write. Delays the return page's self-close a little so its response body
 * can still be read (the tab still closes by itself).
 */
function recordInPage(): void {
  const record: PageRecord = { events: [], broadcasts: [], storageWrites: [] };
  window.__obvRecord = record;
  const json = (value: unknown) =>
    JSON.stringify(value, (_key, inner: unknown) =>
      inner instanceof Error ? { name: inner.name, message: inner.message } : inner,
    ) ?? '';
  const dispatch = EventTarget.prototype.dispatchEvent;
  EventTarget.prototype.dispatchEvent = function (this: EventTarget, event: Event) {
    if (event.type.startsWith('obv-'))
      record.events.push({ type: event.type, detail: json((event as CustomEvent).detail) });
    return dispatch.call(this, event);
  };
  try {
    // Kept reachable from window, so the channel is never collected while the page lives.
    const channel = new BroadcastChannel('obv-link');
    channel.onmessage = (message) => record.broadcasts.push(json(message.data));
    (window as Window & { __obvChannel?: BroadcastChannel }).__obvChannel = channel;
  } catch {
    // No BroadcastChannel: the assertion that messages were seen fails and says so.
  }
  const setItem = Storage.prototype.setItem;
  Storage.prototype.setItem = function (this: Storage, key: string, value: string) {
    record.storageWrites.push(`${this === window.localStorage ? 'local' : 'session'} ${key}=${value}`);
    return setItem.call(this, key, value);
  };
  const close = window.close.bind(window);
  window.close = () => void setTimeout(close, 1_000);
}

/** Records the browser's network traffic of a whole context (every tab): HTTP both ways and WebSocket frames. */
class TrafficRecorder {
  readonly seen: Seen[] = [];
  /** Responses whose body could not be read (other than redirects, which have none to read). */
  readonly unreadable: string[] = [];
  /** Every URL the non-checkout tabs requested or navigated to, with their Referer headers. */
  readonly otherTabUrls: string[] = [];
  readonly #pending: Promise<void>[] = [];
  /** What is still being read, by label: named in the failure if it never ends. */
  readonly #reading = new Set<string>();
  /** Each request's failure, as soon as it is known (see #ended). */
  readonly #failures = new Map<Request, { promise: Promise<Error>; resolve(error: Error): void }>();

  constructor(
    private readonly context: BrowserContext,
    private readonly checkout: () => Page | undefined,
  ) {
    context.on('request', (request) => this.#pending.push(this.#request(request)));
    context.on('response', (response) => this.#pending.push(this.#response(response)));
    context.on('requestfailed', (request) =>
      this.#failureOf(request).resolve(new Error(request.failure()?.errorText ?? 'the request failed')),
    );
    context.on('page', (page) => {
      page.on('framenavigated', (frame) => {
        if (page !== this.checkout()) this.otherTabUrls.push(frame.url());
      });
    });
  }

  /** Frames of the sockets `page` opens; call before the page loads. */
  watchSockets(page: Page): void {
    page.on('websocket', (socket: WebSocket) => {
      socket.on('framereceived', ({ payload }) =>
        this.seen.push({ channel: 'websocket-received', where: socket.url(), text: String(payload) }),
      );
      socket.on('framesent', ({ payload }) =>
        this.seen.push({ channel: 'websocket-sent', where: socket.url(), text: String(payload) }),
      );
    });
  }

  async #request(request: Request): Promise<void> {
    const headers = await request.allHeaders().catch(() => request.headers());
    const where = `${request.method()} ${request.url()}`;
    this.seen.push({
      channel: 'http',
      where: `request ${where}`,
      text: `${where}\n${JSON.stringify(headers)}\n${request.postData() ?? ''}`,
    });
    let page: Page | undefined;
    try {
      page = request.frame().page();
    } catch {
      page = undefined;
    }
    if (page !== this.checkout()) this.otherTabUrls.push(request.url(), headers.referer ?? '');
  }

  #failureOf(request: Request): { promise: Promise<Error>; resolve(error: Error): void } {
    let failure = this.#failures.get(request);
    if (!failure) {
      let resolve: (error: Error) => void = () => undefined;
      const promise = new Promise<Error>((settle) => (resolve = settle));
      failure = { promise, resolve };
      this.#failures.set(request, failure);
    }
    return failure;
  }

  /**
   * Resolves once the response's body has ended: undefined when it ended whole, the error when the
   * request failed first. Chromium can end a request in `requestfailed` after its response arrived (the
   * page aborted it mid-body), and Playwright's `response.finished()` then never settles while the page
   * lives (microsoft/playwright#42786): that made this test hang to its time-out about once in 30 CI runs.
   */
  #ended(response: Response): Promise<Error | undefined> {
    return Promise.race([
      response.finished().then(
        () => undefined,
        (error: Error) => error,
      ),
      this.#failureOf(response.request()).promise,
    ]);
  }

  async #response(response: Response): Promise<void> {
    const where = `${response.status()} ${response.request().method()} ${response.url()}`;
    this.#reading.add(where);
    try {
      await this.#record(response, where);
    } finally {
      this.#reading.delete(where);
    }
  }

  async #record(response: Response, where: string): Promise<void> {
    const headers = await response.allHeaders().catch(() => response.headers());
    let body = '';
    // A request the page aborted (the element stops polling once the socket delivered) has no body
    // the page could read either.
    const aborted = await this.#ended(response);
    if (aborted) {
      body = `(aborted: ${aborted.message})`;
    } else if (response.status() < 300 || response.status() >= 400) {
      try {
        body = (await response.body()).toString('utf8');
      } catch (error) {
        // A tab that moved on before its body was read (the bank tab leaves the proxy's holding page as
        // soon as the bank's address is known): a GET is asked again in this context, so its body is
        // still checked. Anything else stays unreadable, and the test fails on it.
        const again =
          response.request().method() === 'GET'
            ? await this.context.request.get(response.url()).then(
                (reply) => reply.text(),
                () => undefined,
              )
            : undefined;
        if (again === undefined) this.unreadable.push(`${where}: ${(error as Error).message}`);
        else body = again;
      }
    }
    this.seen.push({ channel: 'http', where: `response ${where}`, text: `${JSON.stringify(headers)}\n${body}` });
  }

  /** Waits for the bodies and headers still being read; a read that never ends fails the test, named. */
  async settled(): Promise<void> {
    const deadline = Date.now() + STEP_TIMEOUT_MS;
    while (this.#pending.length > 0) {
      const reads = Promise.all(this.#pending.splice(0)).then(() => 'read' as const);
      const late = new Promise<'late'>((resolve) =>
        setTimeout(resolve, Math.max(0, deadline - Date.now()), 'late').unref(),
      );
      if ((await Promise.race([reads, late])) === 'late')
        assert.fail(`still reading after ${STEP_TIMEOUT_MS} ms: ${[...this.#reading].join(', ') || 'request headers'}`);
    }
  }
}

/** What the checkout page shows and holds right now: DOM (with the element's shadow root), storage, form. */
async function snapshotPage(page: Page, label: string): Promise<Seen[]> {
  const state = await page.evaluate(() => {
    const obv = document.querySelector('obv-link-account') as
      (HTMLElement & { value?: string; account?: unknown }) | null;
    const form = document.querySelector('form');
    // No named helper functions in here: tsx would wrap them in a `__name` call the page does not have.
    return {
      html: document.documentElement.outerHTML,
      shadow: obv?.shadowRoot?.innerHTML ?? '',
      element: JSON.stringify({
        value: obv?.value,
        account: obv?.account,
        attributes: obv ? obv.getAttributeNames().map((n) => [n, obv.getAttribute(n)]) : [],
      }),
      controls: JSON.stringify(
        [...document.querySelectorAll('input, select, textarea')].map((c) => [
          (c as HTMLInputElement).name,
          (c as HTMLInputElement).value,
        ]),
      ),
      formData: form ? [...new FormData(form)].map(([name, value]) => `${name}=${String(value)}`) : [],
      session: Object.keys(sessionStorage).map((key) => `${key}=${sessionStorage.getItem(key) ?? ''}`),
      local: Object.keys(localStorage).map((key) => `${key}=${localStorage.getItem(key) ?? ''}`),
      record: window.__obvRecord ?? { events: [], broadcasts: [], storageWrites: [] },
    };
  });
  return [
    { channel: 'dom', where: `${label} document`, text: state.html },
    { channel: 'dom', where: `${label} shadow root`, text: state.shadow },
    { channel: 'dom', where: `${label} element`, text: state.element },
    { channel: 'dom', where: `${label} controls`, text: state.controls },
    ...state.formData.map((text) => ({ channel: 'form' as const, where: `${label} FormData`, text })),
    ...state.session.map((text) => ({ channel: 'storage' as const, where: `${label} sessionStorage`, text })),
    ...state.local.map((text) => ({ channel: 'storage' as const, where: `${label} localStorage`, text })),
    ...state.record.storageWrites.map((text) => ({
      channel: 'storage' as const,
      where: `${label} storage write`,
      text,
    })),
    ...state.record.events.map(({ type, detail }) => ({
      channel: 'event' as const,
      where: `${label} ${type}`,
      text: detail,
    })),
    ...state.record.broadcasts.map((text) => ({
      channel: 'broadcast' as const,
      where: `${label} BroadcastChannel`,
      text,
    })),
  ];
}

/** The secret and every 12-character piece of it: a truncated or partly masked copy is a leak too. */
function pieces(secret: string, length = 12): string[] {
  const result = [secret];
  for (let start = 0; start + length <= secret.length; start++) result.push(secret.slice(start, start + length));
  return result;
}

function leaksOf(secret: string, seen: readonly Seen[]): string[] {
  const needles = pieces(secret);
  return seen
    .filter((item) => needles.some((needle) => item.text.includes(needle)))
    .map((item) => `${item.channel}: ${item.where}`);
}

function ofChannel(seen: readonly Seen[], channel: Seen['channel']): Seen[] {
  return seen.filter((item) => item.channel === channel);
}

/** The verified account behind a link reference, as only the merchant's server can read it. */
async function linkedAccount(
  demo: RunningDemo,
  linkRef: string,
): Promise<{ accountToken: string; accountLabel: string; fiName: string }> {
  const response = await fetch(new URL(`obv/links/${encodeURIComponent(linkRef)}`, demo.url), {
    headers: { authorization: `Bearer ${MERCHANT_API_KEY}` },
  });
  assert.equal(response.status, 200, 'the merchant server can read the linked account');
  return (await response.json()) as { accountToken: string; accountLabel: string; fiName: string };
}

/** A page of another site (the attacker's), on its own loopback port; `localhost` is another site than `127.0.0.1`. */
async function startAttackerSite(html: () => string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}/`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Links `username` at the sandbox bank and waits until the checkout shows the success. */
async function linkAccount(page: Page, username: string): Promise<string> {
  const bank = await startLinking(page);
  await signInAtBank(bank, username, 'pass_good');
  await waitForState(page, 'success');
  await page.locator('#pay-button:enabled').waitFor();
  return element(page).evaluate((el) => (el as HTMLElement & { value: string }).value);
}

describe('the accountToken never reaches the browser', { timeout: TEST_TIMEOUT_MS * 5 }, () => {
  let demo: RunningDemo;
  let browser: Browser;

  before(async () => {
    [demo, browser] = await Promise.all([
      startTestDemo({ proxy: { merchantApiKey: MERCHANT_API_KEY } }),
      launchChromium(),
    ]);
  });

  after(async () => {
    await browser?.close();
    await demo?.close();
  });

  it(
    'records everything the browser sees during link-and-pay and finds the token in none of it',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      let checkoutPage: Page | undefined;
      let traffic: TrafficRecorder | undefined;
      await withShopper(
        browser,
        demo,
        'token-never-in-browser',
        async ({ page, problems }) => {
          assert.ok(traffic);
          const recorder = traffic;
          const consoleMessages: Seen[] = [];
          page.on('console', (message) =>
            consoleMessages.push({ channel: 'console', where: message.type(), text: message.text() }),
          );
          const orderId = await page.locator('input[name="orderId"]').inputValue();

          const bank = await startLinking(page);
          const bankUrls = [bank.url()];
          bank.on('framenavigated', (frame) => bankUrls.push(frame.url()));
          // The notification after the bank's redirect, so the return page loads and broadcasts before the
          // outcome arrives (an outcome closes the bank tab, which could otherwise be before its redirect).
          demo.provider.controls.notifyLate({ ms: 500, count: 1 });
          await signInAtBank(bank, 'user_good', 'pass_good');
          await waitForState(page, 'success');
          await page.locator('#pay-button:enabled').waitFor();
          // The return page's broadcast reaches the checkout: wait for it so the recording has it.
          await page.waitForFunction(() => (window.__obvRecord?.broadcasts.length ?? 0) > 0, undefined, {
            timeout: STEP_TIMEOUT_MS,
          });
          const linked = await snapshotPage(page, 'linked checkout');
          await saveScreenshot(page, 'token-never-in-browser-linked');

          await pay(page);
          await page.getByRole('heading', { name: 'Payment approved' }).waitFor();
          const receipt = await snapshotPage(page, 'receipt');
          await recorder.settled();
          const seen = [...recorder.seen, ...linked, ...receipt, ...consoleMessages];

          // The real token, read where it lives: the proxy (merchant API key) and the provider that issued it.
          const linkedElement = ofChannel(linked, 'dom').find((item) => item.where.endsWith('element'));
          const linkRef = (JSON.parse(linkedElement?.text ?? '{}') as { value?: string }).value ?? '';
          assert.ok(linkRef.length >= 16, 'the element held a link reference');
          const { accountToken } = await linkedAccount(demo, linkRef);
          const verification = [...demo.provider.state.verifications.values()].find(
            (v) => v.request.merchant.merchantTransactionId === orderId,
          );
          assert.ok(verification, 'the provider recorded the verification for this order');
          assert.ok(verification.result?.status === 'SUCCESS', 'the bank verified the account');
          assert.equal(
            verification.result.accountToken,
            accountToken,
            'the reference stands for the token the provider issued',
          );
          const transactionId = (await page.locator('#transaction-id').textContent()) ?? '';
          assert.equal(
            demo.provider.state.transactions.get(transactionId)?.accountToken,
            accountToken,
            'the payment charged that token',
          );
          assert.ok(accountToken.length >= 16 && !accountToken.includes(linkRef) && !linkRef.includes(accountToken));

          // Each channel recorded something, and what carries the outcome carried the reference: a recorder
          // that saw nothing would make the search below pass for nothing.
          for (const channel of [
            'http',
            'websocket-received',
            'websocket-sent',
            'event',
            'dom',
            'storage',
            'form',
            'broadcast',
          ] as const) {
            assert.ok(ofChannel(seen, channel).length > 0, `recorded some ${channel}`);
          }
          assert.deepEqual(recorder.unreadable, [], 'every response body was read');
          for (const [channel, what] of [
            ['http', 'the checkout’s responses'],
            ['websocket-received', 'the result frame'],
            ['event', 'obv-success'],
            ['form', 'the form data'],
          ] as const) {
            assert.ok(
              ofChannel(seen, channel).some((item) => item.text.includes(linkRef)),
              `${what} carried the link reference`,
            );
          }
          assert.ok(
            ofChannel(seen, 'websocket-received').some((item) => /"type":"result"/.test(item.text)),
            'the outcome came over the socket',
          );
          assert.ok(ofChannel(seen, 'event').some((item) => item.where.endsWith('obv-success')));
          assert.ok(
            recorder.seen.some((item) => /\/obv\/return\//.test(item.where) && /Bank step complete/.test(item.text)),
            'the return page was recorded',
          );
          assert.ok(
            recorder.seen.some(
              (item) =>
                item.where.startsWith('response 200 GET') && item.where.includes(new URL(demo.provider.url).host),
            ),
            'the bank tab was recorded',
          );

          assert.deepEqual(leaksOf(accountToken, seen), [], 'the accountToken appears nowhere the browser can see');

          // The session id reads the outcome: it stays between browser and proxy.
          const open = ofChannel(seen, 'event').find((item) => item.where.endsWith('obv-open'));
          const sessionId = (JSON.parse(open?.text ?? '{}') as { sessionId?: string }).sessionId ?? '';
          assert.ok(sessionId.length >= 16, 'the element was given a session id');
          assert.ok(
            ofChannel(seen, 'websocket-sent').some((item) => item.text.includes(sessionId)),
            'the recorder saw the id where it belongs',
          );
          assert.ok(
            !JSON.stringify(verification).includes(sessionId),
            'the provider’s verification request has no session id',
          );
          assert.ok(
            verification.returnURL && !verification.returnURL.includes(sessionId),
            `returnURL ${verification.returnURL} has no session id`,
          );
          assert.ok(verification.notificationURL && !verification.notificationURL.includes(sessionId));
          assert.ok(
            bankUrls.some((url) => url.includes('/obv/return/')),
            `the bank tab came back through the returnURL: ${bankUrls.join(' ')}`,
          );
          const bankSide = [...bankUrls, ...recorder.otherTabUrls];
          assert.deepEqual(
            bankSide.filter((url) => url.includes(sessionId)),
            [],
            'no URL or Referer of the bank tab carries the session id',
          );
          const broadcasts = ofChannel(seen, 'broadcast');
          assert.deepEqual(
            broadcasts.filter((item) => item.text.includes(sessionId)),
            [],
            'BroadcastChannel messages carry no session id',
          );
          assert.ok(broadcasts.some((item) => /obv-returned/.test(item.text)));
          // The recorder's init script also tries to run in the element's sandboxed frame (the bank tab's
          // opener), which rightly runs no script: that refusal is the recorder's, not the page's.
          const sandboxRefusal = /^Blocked script execution in 'about:blank' because the document's frame is sandboxed/;
          assert.deepEqual(
            problems.filter((problem) => !sandboxRefusal.test(problem)),
            [],
            'no console errors on the way',
          );
        },
        {
          initScript: recordInPage,
          beforeLoad: async (page) => {
            checkoutPage = page;
            traffic = new TrafficRecorder(page.context(), () => checkoutPage);
            traffic.watchSockets(page);
          },
        },
      );
    },
  );

  it(
    'refuses a Pay form posted from another site with 403 and charges nothing',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      await withShopper(browser, demo, 'pay-cross-site-refused', async ({ page, context }) => {
        const linkRef = await linkAccount(page, 'user_good');
        const orderId = await page.locator('input[name="orderId"]').inputValue();
        const payUrl = new URL('pay', demo.url).href;
        // The attacker knows the order and the reference (the worst case) and makes the shopper's browser post them.
        const attacker = await startAttackerSite(
          () => `<!doctype html><form id="f" method="post" action="${payUrl}">
<input name="orderId" value="${orderId}"><input name="linkRef" value="${linkRef}"></form>
<script>document.getElementById('f').submit()</script>`,
        );
        const charged = demo.provider.state.transactions.size;
        const evil = await context.newPage();
        try {
          const [refused] = await Promise.all([
            evil.waitForResponse((response) => response.url() === payUrl && response.request().method() === 'POST'),
            evil.goto(attacker.url),
          ]);
          const sent = await refused.request().allHeaders();
          assert.equal(sent.origin, new URL(attacker.url).origin, 'the post came from the other site');
          assert.equal(sent['sec-fetch-site'], 'cross-site');
          assert.equal(refused.status(), 403);
          assert.match((await refused.json()).title as string, /Cross-site request refused/);
          await saveScreenshot(evil, 'pay-cross-site-refused-attacker');
        } finally {
          await evil.close();
          await attacker.close();
        }
        assert.equal(demo.provider.state.transactions.size, charged, 'nothing was charged');

        // The order and the reference are untouched: the shopper's own Pay still works.
        await pay(page);
        assert.equal(await page.locator('#transaction-status').textContent(), 'APPROVED');
        assert.equal(demo.provider.state.transactions.size, charged + 1);
      });
    },
  );

  it(
    'refuses with 403 a Pay form for an order that is not this browser’s, and charges nothing',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      await withShopper(browser, demo, 'pay-other-order-refused', async ({ page }) => {
        await linkAccount(page, 'user_good');
        // Another shopper's open order (another browser: no cookie shared with this one).
        const otherHtml = await (await fetch(demo.url)).text();
        const otherOrder = /name="orderId" value="(NR-[0-9A-F]+)"/.exec(otherHtml)?.[1] ?? '';
        assert.match(otherOrder, /^NR-/);
        const charged = demo.provider.state.transactions.size;

        await page
          .locator('input[name="orderId"]')
          .evaluate((input, value) => ((input as HTMLInputElement).value = value), otherOrder);
        const [refused] = await Promise.all([
          page.waitForResponse((response) => new URL(response.url()).pathname === '/pay'),
          payButton(page).click(),
        ]);
        assert.equal(refused.status(), 403);
        const problem = (await refused.json()) as { title: string; errors: { path: string }[] };
        assert.equal(problem.title, 'Not your order');
        assert.deepEqual(
          problem.errors.map((error) => error.path),
          ['orderId'],
        );
        assert.equal(demo.provider.state.transactions.size, charged, 'nothing was charged');
      });
    },
  );

  it(
    'shows on the receipt the account the server verified, not what the page posts',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      await withShopper(browser, demo, 'receipt-account-from-server', async ({ page }) => {
        const linkRef = await linkAccount(page, 'user_savings');
        // Whatever a tampered page adds to the form is not what the receipt shows.
        await page.locator('#payment-form').evaluate((form) => {
          for (const [name, value] of [
            ['accountLabel', 'Checking ••••0000'],
            ['fiName', 'Bank of Mallory'],
          ]) {
            const input = document.createElement('input');
            input.type = 'hidden';
            input.name = name ?? '';
            input.value = value ?? '';
            form.append(input);
          }
        });
        await pay(page);
        assert.equal(await page.locator('#transaction-status').textContent(), 'APPROVED');
        const receipt = (await page.locator('.receipt').textContent()) ?? '';
        const account = await linkedAccount(demo, linkRef);
        assert.equal(account.accountLabel, 'Savings ••••8765');
        assert.ok(
          receipt.includes(`${account.accountLabel} · ${account.fiName}`),
          `the receipt shows the verified account: ${receipt}`,
        );
        assert.doesNotMatch(receipt, /0000|Mallory/);
      });
    },
  );
});
