// The return page in a real browser (Chromium): under its strict CSP, its script still runs, tells the
// checkout tab over BroadcastChannel('obv-link') and closes the tab; no CSP violation is reported.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type ConsoleMessage } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../../../scripts/chromium.ts';
import { startProxyPair, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

declare global {
  interface Window {
    obvMessages: unknown[];
  }
}

describe('return page in Chromium', () => {
  let pair: ProxyPair;
  let browser: Browser;
  before(async () => {
    pair = await startProxyPair();
    browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
  });
  after(async () => {
    await browser.close();
    await pair.close();
  });

  test('announces the return on BroadcastChannel and closes itself without a CSP violation', async () => {
    const { sessionId } = await pair.startVerification();
    const returnUrl = await pair.returnUrl(sessionId);
    const context = await browser.newContext();
    const consoleErrors: string[] = [];
    const watch = (message: ConsoleMessage) => {
      // The browser's own favicon probe hits the host app's 404; not the page's doing.
      if (message.location().url.endsWith('/favicon.ico')) return;
      if (message.type() === 'error' || /Content Security Policy|Refused to/.test(message.text()))
        consoleErrors.push(`${message.text()} (${message.location().url})`);
    };
    context.on('page', (page) => page.on('console', watch));
    try {
      // The checkout tab: same origin as the proxy, listening as the element does.
      const checkout = await context.newPage();
      checkout.on('console', watch);
      await checkout.goto(`${pair.baseUrl}/healthz`);
      await checkout.evaluate(() => {
        window.obvMessages = [];
        new BroadcastChannel('obv-link').onmessage = (event: MessageEvent) => window.obvMessages.push(event.data);
      });

      const [returned] = await Promise.all([
        checkout.waitForEvent('popup', { timeout: 10_000 }),
        checkout.evaluate((url) => void window.open(url), returnUrl),
      ]);
      await returned.waitForEvent('close', { timeout: 10_000 });
      await checkout.waitForFunction(() => window.obvMessages.length > 0, undefined, { timeout: 5_000 });
      // Every same-origin page hears the channel: the message names no session.
      assert.deepEqual(await checkout.evaluate(() => window.obvMessages), [{ type: 'obv-returned' }]);
      assert.deepEqual(consoleErrors, []);
      const session = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { state: string };
      assert.equal(session.state, 'returned');
    } finally {
      await context.close();
    }
  });

  test('posts nothing for an unknown session', async () => {
    const context = await browser.newContext();
    try {
      const checkout = await context.newPage();
      await checkout.goto(`${pair.baseUrl}/healthz`);
      await checkout.evaluate(() => {
        window.obvMessages = [];
        new BroadcastChannel('obv-link').onmessage = (event: MessageEvent) => window.obvMessages.push(event.data);
      });
      const page = await context.newPage();
      const response = await page.goto(`${pair.baseUrl}/return/AAAAAAAAAAAAAAAAAAAAAA`);
      assert.equal(response?.status(), 404);
      assert.match((await page.textContent('h1')) ?? '', /Link not recognized/);
      // The known-session case above proves delivery takes well under this; here nothing may arrive.
      await checkout.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
      assert.deepEqual(await checkout.evaluate(() => window.obvMessages), []);
    } finally {
      await context.close();
    }
  });
});
