// The bank tab in a real, headful Chromium (Xvfb, no focus emulation) with real tabs: the element opens
// the proxy's holding page inside the click, sends it on to the bank, brings it forward with "Go to the
// bank tab", closes it on Cancel and once the outcome is in, and the bank's page cannot navigate the checkout. A fake window
// cannot show any of this: Chromium's opener rules decide it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { RunningDemo } from '../../demo/start-demo.ts';
import { launchHeadfulChromium, type HeadfulChromium } from '../helpers/headful-chromium.ts';
import {
  STEP_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  element,
  elementStatus,
  saveScreenshot,
  signInAtBank,
  startTestDemo,
  waitForState,
} from './harness.ts';

const visibility = (page: Page) => page.evaluate(() => document.visibilityState);

/** Short enough that the expiry test waits seconds, long enough for a loaded machine to start a session. */
const SHORT_SESSION_TTL_MS = 5_000;

/** The `part` of the control focused inside the element. */
const focusedPart = (page: Page) =>
  page.evaluate(
    () => document.querySelector('obv-link-account')!.shadowRoot!.activeElement?.getAttribute('part') ?? null,
  );

describe('the bank tab in headful Chromium', { timeout: TEST_TIMEOUT_MS * 5 }, () => {
  let demo: RunningDemo;
  /** Sessions that expire in seconds: the bank tab must close with them. */
  let shortLivedDemo: RunningDemo;
  let chromium: HeadfulChromium;
  const opened: Page[] = [];

  before(async () => {
    [demo, shortLivedDemo, chromium] = await Promise.all([
      startTestDemo(),
      startTestDemo({ sessionTtlMs: SHORT_SESSION_TTL_MS }),
      launchHeadfulChromium(),
    ]);
    chromium.context.setDefaultTimeout(STEP_TIMEOUT_MS);
  });
  after(async () => {
    await chromium?.close();
    await Promise.all([demo?.close(), shortLivedDemo?.close()]);
  });

  /** A checkout in a new tab of the real browser; its tabs are closed after the test. */
  async function openCheckout(on: RunningDemo = demo): Promise<Page> {
    const page = await chromium.context.newPage();
    opened.push(page);
    await page.goto(on.url);
    await waitForState(page, 'idle');
    return page;
  }

  async function closeAll(): Promise<void> {
    for (const page of chromium.context.pages()) {
      // Bounded: a checkout the bank tab managed to navigate (a failing tabnabbing test) can hang its close.
      if (opened.includes(page) || !page.url().startsWith('about:'))
        await Promise.race([page.close().catch(() => undefined), page.waitForTimeout(3_000).catch(() => undefined)]);
    }
    opened.length = 0;
  }

  /** Clicks "Link your bank account" and returns the new tab. */
  async function startLinking(page: Page): Promise<Page> {
    const tabPromise = chromium.context.waitForEvent('page');
    await element(page).getByRole('button', { name: 'Link your bank account' }).click();
    const tab = await tabPromise;
    opened.push(tab);
    return tab;
  }

  it('"Go to the bank tab" brings the real bank tab to the front', async () => {
    const page = await openCheckout();
    try {
      const tab = await startLinking(page);
      await tab.getByLabel('Username').waitFor();
      await waitForState(page, 'waiting');
      await tab.evaluate(() => Object.assign(window, { stillTheSamePage: true }));
      assert.equal(await visibility(tab), 'visible');
      await page.bringToFront();
      await page.waitForFunction(() => document.visibilityState === 'visible');
      assert.equal(await visibility(tab), 'hidden');
      await element(page).getByRole('button', { name: 'Go to your bank' }).click();
      await tab.waitForFunction(() => document.visibilityState === 'visible');
      assert.equal(await visibility(page), 'hidden');
      // Brought forward, not reloaded or sent elsewhere.
      assert.equal(
        await tab.evaluate(() => (window as Window & { stillTheSamePage?: boolean }).stillTheSamePage),
        true,
      );
      await saveScreenshot(tab, 'bank-tab-focused');
    } finally {
      await closeAll();
    }
  });

  it('closes the bank tab as soon as the outcome is in, so the shopper is back on the checkout that shows it', async () => {
    const page = await openCheckout();
    try {
      const tab = await startLinking(page);
      // A return page that would stay open (its script, which closes it, answers nothing; the page itself
      // is the bank's redirect, which a route does not see): only the element can close the tab here.
      await tab.route('**/return-page.js', (route) => route.fulfill({ contentType: 'text/javascript', body: '' }));
      await tab.getByLabel('Username').waitFor();
      assert.equal(await visibility(page), 'hidden');
      const closed = tab.waitForEvent('close', { timeout: STEP_TIMEOUT_MS });
      await signInAtBank(tab, 'user_good');
      await waitForState(page, 'success');
      await closed;
      await page.waitForFunction(() => document.visibilityState === 'visible');
      // Said again now that the checkout is back in front (emptied a moment first, for screen readers).
      await element(page).getByText('Bank account linked').waitFor();
    } finally {
      await closeAll();
    }
  });

  it('does not let the bank’s page navigate the checkout (reverse tabnabbing)', async () => {
    const page = await openCheckout();
    try {
      const tab = await startLinking(page);
      await tab.getByLabel('Username').waitFor();
      const checkoutUrl = page.url();
      const attempts = await tab.evaluate(() => {
        const results: string[] = [];
        const opener = window.opener as Window | null;
        for (const target of [opener, opener?.top, opener?.parent]) {
          try {
            if (!target) {
              results.push('no opener');
              continue;
            }
            target.location.href = 'about:blank#tabnabbed';
            results.push('navigated');
          } catch {
            results.push('refused');
          }
        }
        return results;
      });
      assert.ok(!attempts.includes('navigated'), attempts.join(', '));
      await page.waitForTimeout(300);
      assert.equal(page.url(), checkoutUrl);
      assert.equal(await page.evaluate(() => location.hash), '');
    } finally {
      await closeAll();
    }
  });

  /**
   * Runs `setUp` in a click handler of a button added to the checkout (a merchant's own "Pay by bank"
   * button), and returns whether a tab opened and what the opener-navigation attempts from it did.
   */
  async function tabnabFromStartIn(
    page: Page,
    setUp: () => void,
  ): Promise<{ tab: Page | undefined; attempts: string[] }> {
    await page.evaluate(`(() => {
      const button = document.createElement('button');
      button.id = 'merchant-pay-by-bank';
      button.textContent = 'Pay by bank';
      button.addEventListener('click', ${setUp.toString()});
      document.body.prepend(button);
    })()`);
    // The start answers only after the attempts below: the tab stays on the proxy's holding page meanwhile.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/obv/verifications', async (route) => {
      await held;
      await route
        .fulfill({
          status: 503,
          contentType: 'application/problem+json',
          body: '{"title":"Service Unavailable","status":503}',
        })
        .catch(() => undefined);
    });
    const tabPromise = chromium.context.waitForEvent('page', { timeout: 3_000 }).catch(() => undefined);
    await page.locator('#merchant-pay-by-bank').click();
    const tab = await tabPromise;
    if (!tab) {
      release();
      return { tab, attempts: [] };
    }
    opened.push(tab);
    await tab.waitForLoadState('domcontentloaded');
    const attempts = await tab.evaluate(() => {
      const opener = window.opener as Window | null;
      if (!opener) return ['no opener'];
      const results: string[] = [];
      for (const target of [opener, opener.top, opener.parent]) {
        try {
          target!.location.href = 'about:blank#tabnabbed';
          results.push('navigated');
        } catch {
          results.push('refused');
        }
      }
      return results;
    });
    release();
    return { tab, attempts };
  }

  async function assertCheckoutNotNavigated(page: Page, checkoutUrl: string, attempts: string[]): Promise<void> {
    assert.ok(!attempts.includes('navigated'), attempts.join(', '));
    await page.waitForTimeout(300);
    assert.equal(page.url(), checkoutUrl);
    assert.equal(await page.evaluate(() => location.hash), '');
  }

  it('does not let the bank tab navigate the checkout when start() runs in the same task as creating the element', async () => {
    const page = await openCheckout();
    try {
      const checkoutUrl = page.url();
      const { tab, attempts } = await tabnabFromStartIn(page, () => {
        const element = document.createElement('obv-link-account') as HTMLElement & { start(): void };
        element.setAttribute('proxy-url', '/obv');
        document.body.append(element);
        element.start();
      });
      assert.ok(tab, 'a bank tab opened inside the click');
      assert.deepEqual(attempts, ['no opener']);
      await assertCheckoutNotNavigated(page, checkoutUrl, attempts);
    } finally {
      await closeAll();
    }
  });

  it('does not let a bank tab navigate the checkout when start() is called on a detached element', async () => {
    const page = await openCheckout();
    try {
      const checkoutUrl = page.url();
      await page.evaluate(() => {
        const errors: string[] = [];
        Object.assign(window, { detachedErrors: errors });
      });
      const { attempts } = await tabnabFromStartIn(page, () => {
        const element = document.createElement('obv-link-account') as HTMLElement & { start(): void };
        element.setAttribute('proxy-url', '/obv');
        // Attached once, then detached: the element has a shadow root but is not on the page.
        document.body.append(element);
        element.remove();
        element.addEventListener('obv-error', (event) =>
          (window as unknown as { detachedErrors: string[] }).detachedErrors.push(
            (event as CustomEvent<{ kind: string }>).detail.kind,
          ),
        );
        element.start();
      });
      await assertCheckoutNotNavigated(page, checkoutUrl, attempts);
      // Refused, and said so to the developer.
      assert.deepEqual(await page.evaluate(() => (window as unknown as { detachedErrors: string[] }).detachedErrors), [
        'configuration',
      ]);
    } finally {
      await closeAll();
    }
  });

  it('says so when the shopper closed the bank tab, moves focus to “Open your bank’s page”, and that link finishes the flow', async () => {
    const page = await openCheckout();
    try {
      const tab = await startLinking(page);
      await tab.getByLabel('Username').waitFor();
      await waitForState(page, 'waiting');
      // The shopper closes the bank tab without finishing; the checkout comes back to the front.
      await tab.close();
      await page.bringToFront();
      await element(page).getByText('Your bank’s page was closed').waitFor();
      assert.match(await elementStatus(page), /Open your bank’s page again to finish, or cancel/);
      await page.waitForFunction(
        () => document.querySelector('obv-link-account')!.shadowRoot!.activeElement?.getAttribute('part') === 'link',
      );
      await saveScreenshot(page, 'bank-tab-closed-en');
      const again = chromium.context.waitForEvent('page');
      await page.keyboard.press('Enter');
      const bank = await again;
      opened.push(bank);
      await signInAtBank(bank, 'user_good');
      await waitForState(page, 'success');
    } finally {
      await closeAll();
    }
  });

  it('says so when “Go to the bank tab” finds the tab closed', async () => {
    const page = await openCheckout();
    try {
      const tab = await startLinking(page);
      await tab.getByLabel('Username').waitFor();
      await page.bringToFront();
      await page.waitForFunction(() => document.visibilityState === 'visible');
      // Closed from the bank tab's own script: the checkout stays in front and sees no visibility change. The
      // close is awaited from before the script runs: it may end before `evaluate` answers (or cut its answer).
      const closed = tab.waitForEvent('close');
      await tab.evaluate(() => window.close()).catch(() => undefined);
      await closed;
      // The element also notices the closed tab by itself (its watch), and may do so before the click: the
      // button is then gone and the same words are shown, which is what this test asks for either way.
      const saysClosed = element(page).getByText('Your bank’s page was closed');
      await element(page)
        .getByRole('button', { name: 'Go to your bank' })
        .click({ timeout: 3_000 })
        .catch(async (error: unknown) => {
          if (!(await saysClosed.isVisible())) throw error;
        });
      await saysClosed.waitFor();
      assert.equal(await focusedPart(page), 'link');
      assert.equal(
        chromium.context.pages().filter((p) => p.url().includes('/consumer/')).length,
        0,
        'no blank or second bank tab',
      );
    } finally {
      await closeAll();
    }
  });

  it('closes the bank tab when the session expires: the shopper cannot sign in for nothing', async () => {
    const page = await openCheckout(shortLivedDemo);
    try {
      const tab = await startLinking(page);
      await tab.getByLabel('Username').waitFor();
      const closed = tab.waitForEvent('close', { timeout: SHORT_SESSION_TTL_MS + STEP_TIMEOUT_MS });
      await waitForState(page, 'expired').catch(() => undefined);
      await closed;
      await waitForState(page, 'expired');
    } finally {
      await closeAll();
    }
  });

  it('Cancel closes the bank tab, and the bank’s return page then says the link was cancelled', async () => {
    const page = await openCheckout();
    try {
      const tab = await startLinking(page);
      await tab.getByLabel('Username').waitFor();
      const consumerUrl = tab.url();
      await page.bringToFront();
      const closed = tab.waitForEvent('close');
      await element(page).getByRole('button', { name: 'Cancel' }).click();
      await closed;
      await waitForState(page, 'idle');
      // The shopper finds the bank's page again (history, another device) and finishes there.
      const again = await chromium.context.newPage();
      opened.push(again);
      await again.goto(consumerUrl);
      await signInAtBank(again, 'user_good');
      await again.getByRole('heading', { name: 'Bank linking was cancelled' }).waitFor();
      await saveScreenshot(again, 'return-page-cancelled-en');
      await page.waitForTimeout(300);
      assert.equal(
        await page.locator('obv-link-account').getAttribute('state'),
        'idle',
        'the checkout still shows no account',
      );
    } finally {
      await closeAll();
    }
  });

  it('shows "Connecting to your bank…" in the new tab while the start is slow, and closes it when the start fails', async () => {
    const page = await openCheckout();
    try {
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      await page.route('**/obv/verifications', async (route) => {
        await held;
        await route.fulfill({
          status: 503,
          contentType: 'application/problem+json',
          body: JSON.stringify({ title: 'Service Unavailable', status: 503 }),
        });
      });
      const tab = await startLinking(page);
      await tab.getByRole('heading', { name: 'Connecting to your bank…' }).waitFor();
      assert.equal(await tab.title(), 'Connecting to your bank…');
      await saveScreenshot(tab, 'holding-page-en');
      const closed = tab.waitForEvent('close');
      release();
      await closed;
      await waitForState(page, 'error');
    } finally {
      await closeAll();
    }
  });

  it('says the outcome again when the shopper comes back to the checkout tab (a hidden tab’s live region is not heard)', async () => {
    // A bank tab the element does not hold, so cannot close when the outcome comes (it closes its own):
    // the pop-up was blocked and the shopper opened the bank's page from the element's link.
    const page = await chromium.context.newPage();
    opened.push(page);
    await page.addInitScript(() => {
      window.open = () => null;
    });
    await page.goto(demo.url);
    await waitForState(page, 'idle');
    try {
      await element(page).getByRole('button', { name: 'Link your bank account' }).click();
      await waitForState(page, 'waiting');
      const tabPromise = chromium.context.waitForEvent('page');
      await element(page)
        .getByRole('link', { name: /Open your bank/ })
        .click();
      const tab = await tabPromise;
      opened.push(tab);
      // A return page that stays open (its script, which closes it, answers nothing): the bank tab keeps the
      // front while the outcome reaches the checkout.
      await tab.route('**/return-page.js', (route) => route.fulfill({ contentType: 'text/javascript', body: '' }));
      await tab.getByLabel('Username').waitFor();
      assert.equal(await visibility(page), 'hidden');
      // Every change of the live region, with whether the checkout was visible then.
      await page.evaluate(() => {
        const region = document.querySelector('obv-link-account')!.shadowRoot!.querySelector('[part~="status"]')!;
        const seen: Array<{ visible: boolean; text: string }> = [];
        Object.assign(window, { regionChanges: seen });
        new MutationObserver(() =>
          seen.push({ visible: document.visibilityState === 'visible', text: region.textContent!.trim() }),
        ).observe(region, { childList: true, subtree: true, characterData: true });
      });
      await signInAtBank(tab, 'user_good');
      await waitForState(page, 'success');
      assert.equal(await visibility(page), 'hidden', 'the outcome arrived while the checkout was hidden');
      await page.bringToFront();
      await page.waitForFunction(() => {
        const seen =
          (window as Window & { regionChanges?: Array<{ visible: boolean; text: string }> }).regionChanges ?? [];
        const emptied = seen.findIndex((change) => change.visible && change.text === '');
        return (
          emptied >= 0 &&
          seen.slice(emptied + 1).some((change) => change.visible && change.text.includes('Bank account linked'))
        );
      });
    } finally {
      await closeAll();
    }
  });
});
