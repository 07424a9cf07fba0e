// The pages around the element as a shopper meets them on a phone, in Chromium: the sandbox bank's page
// (names the merchant, money as the shopper reads it, nothing overflowing at 320 px in Spanish) and the
// demo checkout (a language switch, and no jump when the element's script arrives late).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { STEP_TIMEOUT_MS, TEST_TIMEOUT_MS, demoInChromium, element, saveScreenshot, waitForState } from './harness.ts';

/** Elements inside the bank's card that stick out of it, by their text. */
function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const card = document.querySelector('.card')!.getBoundingClientRect();
    return [...document.querySelectorAll<HTMLElement>('.card button, .card input:not([type="hidden"])')]
      .filter((control) => {
        const box = control.getBoundingClientRect();
        return (
          box.right > card.right + 0.5 || box.left < card.left - 0.5 || control.scrollWidth > control.clientWidth + 1
        );
      })
      .map((control) => control.textContent?.trim() || control.id);
  });
}

describe('the shopper’s pages around the element', { timeout: TEST_TIMEOUT_MS * 4 }, () => {
  const suite = demoInChromium();

  for (const lang of ['en', 'es'] as const) {
    it(`shows the bank page at 320 px in ${lang} with the merchant's name, the amount as money, and nothing overflowing`, async () => {
      const context = await suite.browser.newContext({ viewport: { width: 320, height: 700 }, deviceScaleFactor: 2 });
      context.setDefaultTimeout(STEP_TIMEOUT_MS);
      try {
        const page = await context.newPage();
        await page.goto(`${suite.demo.url}/?lang=${lang}`);
        await waitForState(page, 'idle');
        const [bank] = await Promise.all([
          context.waitForEvent('page'),
          element(page).locator('[part~="button"]').click(),
        ]);
        await bank.setViewportSize({ width: 320, height: 700 });
        await bank.locator('#username').waitFor();
        const lead = (await bank.locator('.lead').textContent()) ?? '';
        assert.match(lead, /^Northwind Roasters /, lead);
        assert.match(lead, lang === 'en' ? /payment of \$\d+\.\d{2}\./ : /pago de \$\d+\.\d{2}\./, lead);
        assert.doesNotMatch(lead, /USD/);
        assert.deepEqual(await overflowing(bank), []);
        await saveScreenshot(bank, `bank-page-${lang}-320`);
      } finally {
        await context.close();
      }
    });
  }

  it('switches the checkout’s element (and the bank step) to Spanish and back with the language links', async () => {
    const context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(suite.demo.url);
      await waitForState(page, 'idle');
      await page
        .getByRole('navigation', { name: 'Language of the bank linking' })
        .getByRole('link', { name: 'Español' })
        .click();
      await waitForState(page, 'idle');
      assert.equal(await page.locator('obv-link-account').getAttribute('language'), 'es');
      await element(page).getByText('Paga desde tu cuenta bancaria').waitFor();
      assert.equal(await page.getByRole('link', { name: 'Español' }).getAttribute('aria-current'), 'true');
      await saveScreenshot(page, 'checkout-es');
      await page.getByRole('link', { name: 'English' }).click();
      await element(page).getByText('Pay from your bank account').waitFor();
    } finally {
      await context.close();
    }
  });

  for (const width of [1280, 375, 320]) {
    it(`keeps the element’s space while its script is late at ${width} px: the checkout does not jump`, async () => {
      const context = await suite.browser.newContext({ viewport: { width, height: 900 } });
      try {
        const page = await context.newPage();
        let release: () => void = () => undefined;
        const late = new Promise<void>((resolve) => (release = resolve));
        await page.route('**/assets/obv-link-account.js', async (route) => {
          await late;
          await route.continue();
        });
        // The element's module holds DOMContentLoaded back; the page is parsed and styled before that.
        await page.goto(suite.demo.url, { waitUntil: 'commit' });
        await page.waitForFunction(() => document.readyState !== 'loading' && !!document.querySelector('#pay-button'));
        const payTop = () => page.locator('#pay-button').evaluate((button) => button.getBoundingClientRect().top);
        const before = await payTop();
        release();
        await waitForState(page, 'idle');
        // The first screen is complete with the proxy's offer for the link token: the shop allows saving, so
        // the consent box is part of it (a first-time shopper).
        await page.locator('obv-link-account').locator('#consent').waitFor();
        const jump = (await payTop()) - before;
        // Within a line: the reserved height is the idle card's, give or take the hint's wrapping.
        assert.ok(Math.abs(jump) <= 24, `the Pay button moved ${jump} px when the element arrived`);
      } finally {
        await context.close();
      }
    });
  }
});
