// The bank step bound to the browser that started it, in a real headful Chromium with two browsers'
// worth of cookies (two contexts): the shopper's own flow pays; an attacker who sends their consumerUrl
// to a victim gets nothing when the victim signs in — the victim's tab says to finish where it started,
// and the attacker's checkout never receives a link reference.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import type { RunningDemo } from '../../demo/start-demo.ts';
import { launchHeadfulChromium, type HeadfulChromium } from '../helpers/headful-chromium.ts';
import { element, pay, saveScreenshot, signInAtBank, startLinking, startTestDemo, STEP_TIMEOUT_MS, TEST_TIMEOUT_MS, waitForState } from './harness.ts';

describe('bank step bound to the starting browser (headful Chromium)', { timeout: TEST_TIMEOUT_MS * 3 }, () => {
  let demo: RunningDemo;
  let chromium: HeadfulChromium;
  const contexts: BrowserContext[] = [];

  before(async () => {
    [demo, chromium] = await Promise.all([startTestDemo({ proxy: { bindBankStep: true } }), launchHeadfulChromium()]);
  });
  after(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await chromium?.close();
    await demo?.close();
  });

  /** A browser of its own: its own cookies, as another person's browser has. */
  async function newBrowserContext(): Promise<BrowserContext> {
    const context = await chromium.browser.newContext();
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    contexts.push(context);
    return context;
  }

  async function openCheckout(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    await page.goto(demo.url);
    await waitForState(page, 'idle');
    return page;
  }

  it('the shopper who started signs in and pays: the binding cookie comes back with the bank\'s redirect', async () => {
    const shopper = await openCheckout(await newBrowserContext());
    const bank = await startLinking(shopper);
    await signInAtBank(bank, 'user_good');
    await waitForState(shopper, 'success');
    await pay(shopper);
    await shopper.getByRole('heading', { name: 'Payment approved' }).waitFor();
  });

  it('the attack: a victim signing in through the attacker\'s consumerUrl links nothing for the attacker', async () => {
    const attacker = await openCheckout(await newBrowserContext());
    const attackersTab = await startLinking(attacker);
    const consumerUrl = attackersTab.url();
    await attackersTab.close();
    await waitForState(attacker, 'waiting');

    const victimContext = await newBrowserContext();
    const victim = await victimContext.newPage();
    await victim.goto(consumerUrl);
    await signInAtBank(victim, 'user_good');
    await victim.getByRole('heading', { name: 'Finish in the browser where you started' }).waitFor();
    const returnUrl = victim.url().split('?')[0] ?? '';
    for (const width of [1280, 375, 320]) {
      await victim.setViewportSize({ width, height: 800 });
      await saveScreenshot(victim, `bank-step-other-browser-en-${width}`);
    }
    await victim.goto(`${returnUrl}?lang=es`);
    await victim.getByRole('heading', { name: 'Termina en el navegador donde empezaste' }).waitFor();
    for (const width of [1280, 375, 320]) {
      await victim.setViewportSize({ width, height: 800 });
      await saveScreenshot(victim, `bank-step-other-browser-es-${width}`);
    }

    await demo.provider.notificationsSettled();
    // The provider reported a success; the attacker's checkout still waits and holds no link reference.
    await attacker.waitForTimeout(500);
    assert.equal(await element(attacker).getAttribute('state'), 'waiting');
    assert.equal(await element(attacker).evaluate((el) => (el as HTMLElement & { value?: string }).value ?? ''), '');
    const posted = await attacker.request.post(new URL('/obv/transactions', demo.url).href, { data: {}, failOnStatusCode: false });
    assert.equal(posted.status(), 401, 'and the page cannot reach the server-only route anyway');
  });
});
