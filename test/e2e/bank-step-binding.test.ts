// The bank step bound to the browser that started it (production mode's binding), in a real headful
// Chromium with two browsers' worth of cookies (two contexts): the first-time shopper's own flow, saving
// the account, shows it at once (its return tab never says "Finishing…": the bank's redirect carries the
// return URL's proof) and pays at once, under production mode's own 10 s grace; the same shopper returning pays with the saved account; an attacker who sends their consumerUrl to a victim and keeps the return page
// open in their own browser — before the victim signs in, reloading while the victim's redirect comes
// back, and again after — gets nothing: the victim's tab says to finish where it started, the attacker's
// checkout ends with BANK_STEP_ELSEWHERE and never holds a link reference.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import type { RunningDemo } from '../../demo/start-demo.ts';
import { createStorage } from '../../proxy/storage/create-storage.ts';
import { markerKey } from '../../proxy/storage/markers.ts';
import { launchHeadfulChromium, type HeadfulChromium } from '../helpers/headful-chromium.ts';
import { consentWords } from '../../proxy/words/consent.ts';
import {
  element,
  pay,
  saveScreenshot,
  signInAtBank,
  startLinking,
  startTestDemo,
  STEP_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  waitForState,
} from './harness.ts';

describe('bank step bound to the starting browser (headful Chromium)', { timeout: TEST_TIMEOUT_MS * 3 }, () => {
  let demo: RunningDemo;
  let chromium: HeadfulChromium;
  const contexts: BrowserContext[] = [];
  // The proxy's store, so the test can give the attacker the URL of their own return page (the worst case:
  // nothing tells it to them, but the binding must not depend on that).
  const backend = createStorage({ kind: 'memory' });
  const store = backend.sessionStore;

  before(async () => {
    [demo, chromium] = await Promise.all([
      // Production mode's binding with its own 10 s grace: the honest shopper below must not wait for it.
      startTestDemo({ proxy: { bindBankStep: true, backend } }),
      launchHeadfulChromium(),
    ]);
  });
  after(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await chromium?.close();
    await demo?.close();
    await backend.close();
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

  it('the first-time shopper saves the account, sees it at once and pays with no wait; returning, pays with the saved account', async () => {
    const shopper = await openCheckout(await newBrowserContext());
    await element(shopper)
      .getByRole('checkbox', { name: consentWords('en').checkbox })
      .check();
    const [started, bank] = await Promise.all([
      shopper.waitForResponse((response) => response.url().endsWith('/verifications') && response.status() === 201),
      startLinking(shopper),
    ]);
    const { sessionId } = (await started.json()) as { sessionId: string };
    // Every return page the bank's tab asks for: the first is the last (no "Finishing…", no reload). Counted by
    // request: the element closes the tab as soon as the account is shown, sometimes before the browser has
    // reported the page's response; each response that was reported is read.
    let returnVisits = 0;
    const returns: Promise<string>[] = [];
    const isReturnPage = (url: string) => new URL(url).pathname.startsWith('/obv/return/');
    bank.on('request', (request) => {
      if (isReturnPage(request.url())) returnVisits++;
    });
    bank.on('response', (response) => {
      if (isReturnPage(response.url())) returns.push(response.text().catch(() => 'closed'));
    });
    await signInAtBank(bank, 'user_good');
    await waitForState(shopper, 'success');
    const pages = await Promise.all(returns);
    assert.equal(returnVisits, 1, 'one visit of the return page');
    assert.ok(pages.every((page) => !page.includes('Finishing your bank step')));
    // The bank step is confirmed already (the return URL's proof): the Pay below waits for no grace.
    assert.equal(await store.readMark(markerKey.bankStep(sessionId)), 'confirmed');
    await pay(shopper);
    await shopper.getByRole('heading', { name: 'Payment approved' }).waitFor();

    // The same browser, next order: the saved account, paid in one click without a bank step.
    const verifications = demo.provider.stats.verificationRequests;
    await shopper.goto(demo.url);
    await waitForState(shopper, 'saved');
    await shopper.locator('#pay-button:enabled').waitFor();
    await pay(shopper);
    await shopper.getByRole('heading', { name: 'Payment approved' }).waitFor();
    assert.equal(demo.provider.stats.verificationRequests, verifications, 'no bank step the second time');
  });

  for (const saving of [false, true]) {
    it(`the attack${saving ? ', with "Save this account" ticked' : ''}: the attacker keeps their return page open before, while and after the victim signs in, and gets nothing`, () =>
      attack(saving));
  }

  /** The attack, start to end; with `saving`, the attacker also asks for the account to be saved for their user. */
  async function attack(saving: boolean): Promise<void> {
    const attacker = await openCheckout(await newBrowserContext());
    if (saving)
      await element(attacker)
        .getByRole('checkbox', { name: consentWords('en').checkbox })
        .check();
    const [started, attackersTab] = await Promise.all([
      attacker.waitForResponse((response) => response.url().endsWith('/verifications') && response.status() === 201),
      startLinking(attacker),
    ]);
    const { sessionId } = (await started.json()) as { sessionId: string };
    const consumerUrl = attackersTab.url();
    await attackersTab.close();
    const returnRef = (await store.get(sessionId))?.returnRef;
    assert.ok(returnRef);
    const returnUrl = new URL(`/obv/return/${returnRef}`, demo.url).href;

    // Before the victim signs in: the attacker's own browser, with its cookie, on the return page. It does
    // not count, and the page keeps reloading itself (the attacker polls for free).
    const attackersReturn = await attacker.context().newPage();
    const confirmedForAttacker: string[] = [];
    attackersReturn.on('load', () => {
      void attackersReturn.title().then(
        (title) => {
          if (/Bank step complete/.test(title)) confirmedForAttacker.push(title);
        },
        () => undefined,
      );
    });
    await attackersReturn.goto(returnUrl);
    await attackersReturn.getByRole('heading', { name: 'Finishing your bank step…' }).waitFor();

    // The victim, in a browser of their own, signs in; the bank sends their browser back.
    const victimContext = await newBrowserContext();
    const victim = await victimContext.newPage();
    await victim.goto(consumerUrl);
    await signInAtBank(victim, 'user_good');
    await victim.getByRole('heading', { name: 'Finish in the browser where you started' }).waitFor();
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

    // The attacker's reloading page lands on the same refusal, and their checkout ends with it.
    await attackersReturn.getByRole('heading', { name: 'Finish in the browser where you started' }).waitFor();
    await waitForState(attacker, 'failure');
    await element(attacker)
      .getByText(/finished in another browser/)
      .waitFor();
    assert.equal(await element(attacker).evaluate((el) => (el as HTMLElement & { value?: string }).value ?? ''), '');
    // And after: once more, by hand.
    await attackersReturn.goto(returnUrl);
    await attackersReturn.getByRole('heading', { name: 'Finish in the browser where you started' }).waitFor();
    assert.deepEqual(confirmedForAttacker, []);
    const posted = await attacker.request.post(new URL('/obv/transactions', demo.url).href, {
      data: {},
      failOnStatusCode: false,
    });
    assert.equal(posted.status(), 401, 'and the page cannot reach the server-only route anyway');
    if (saving) {
      // No saved account for the attacker's user: the shop's server got none, and the next checkout offers none.
      const shopper = `shopper-${(await attacker.context().cookies()).find((c) => c.name === 'nr_shopper')!.value}`;
      assert.deepEqual(demo.savedAccounts.list(shopper), []);
      await attacker.goto(demo.url);
      await waitForState(attacker, 'idle');
    }
  }
});
