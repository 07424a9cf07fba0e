// Chosen is not confirmed (issue 39 §4), in production mode (the bank-step binding on), on the demo shop in
// Chromium at 375 px, in English and Spanish: a returning shopper's checkout preselects the saved account
// and shows it at once, but the merchant hears nothing of it (no onOutcome, which link.succeeded goes out
// with) and its reference pays nothing, however long the page stays open. The Pay click is the
// confirmation: the element holds the submit, confirms, and submits again (one click, paid once); a
// confirmation that cannot go through stops the submit and says why, in the shopper's language.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OutcomeReport } from '../../proxy/index.ts';
import { consentWords } from '../../proxy/words/consent.ts';
import { offerWords } from '../../proxy/words/offer.ts';
import { SHOP } from '../../demo/checkout/server/orders.ts';
import {
  demoInChromium,
  element,
  linkAtBank,
  pay,
  payButton,
  saveScreenshot,
  STEP_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  waitForState,
} from './returning-shopper-steps.ts';

const MERCHANT_API_KEY = 'test-merchant-api-key-confirm-0123456789';
const LINK_BUTTON = { en: 'Link your bank account', es: 'Vincular cuenta bancaria' } as const;
/** The bank step's grace in this run: a page left open longer than it still releases nothing. */
const GRACE_MS = 300;

describe('a returning shopper confirms the chosen saved account with Pay (production mode)', () => {
  const reports: OutcomeReport[] = [];
  const suite = demoInChromium({
    proxy: {
      merchantApiKey: MERCHANT_API_KEY,
      bindBankStep: true,
      bankStepGraceMs: GRACE_MS,
      onOutcome: (report: OutcomeReport) => void reports.push(report),
    },
  });

  for (const lang of ['en', 'es'] as const) {
    it(
      `${lang}: the preselected account releases nothing until Pay; a failed confirmation stops Pay with words; Pay pays once`,
      { timeout: TEST_TIMEOUT_MS * 2 },
      async () => {
        const context = await suite.browser.newContext({ viewport: { width: 375, height: 812 } });
        context.setDefaultTimeout(STEP_TIMEOUT_MS);
        const page = await context.newPage();
        const problems: string[] = [];
        page.on('pageerror', (error) => problems.push(error.message));
        const host = element(page);
        const url = `${suite.demo.url}?lang=${lang}`;
        try {
          // A first purchase through the bank, the account saved (the bank step is its own confirmation).
          await page.goto(url);
          await waitForState(page, 'idle');
          await host.getByRole('checkbox', { name: consentWords(lang, SHOP.name).checkbox }).check();
          await linkAtBank(page, host.getByRole('button', { name: LINK_BUTTON[lang] }), lang);
          await waitForState(page, 'success');
          await pay(page);
          await page.locator('#transaction-status', { hasText: 'APPROVED' }).waitFor();

          // The next checkout: the saved account, chosen and shown at once; the page left open past the grace.
          const used = page.waitForResponse((response) => response.url().endsWith('/obv/saved-accounts/use'));
          await page.goto(url);
          await waitForState(page, 'saved');
          await page.locator('#pay-button:enabled').waitFor();
          const { linkRef } = (await (await used).json()) as { linkRef: string };
          const released = reports.length;
          await page.waitForTimeout(GRACE_MS * 2);
          assert.equal(reports.length, released, 'no onOutcome (nor link.succeeded) for a choice not confirmed');
          assert.equal(await host.evaluate((el) => (el as HTMLElement & { value: string }).value), '', 'no form value');
          const early = await fetch(new URL(`/obv/links/${linkRef}`, suite.demo.url), {
            headers: { authorization: `Bearer ${MERCHANT_API_KEY}` },
          });
          assert.equal(early.status, 403, 'its reference is not payable');
          assert.equal(((await early.json()) as { type: string }).type, 'urn:obv-link:problem:choice-unconfirmed');

          // Pay while the proxy cannot be reached: the submit stops, the element says why; nothing released.
          const transactions = suite.demo.provider.stats.transactions;
          await page.route('**/obv/saved-accounts/confirm', (route) => route.abort('connectionrefused'));
          await payButton(page).click();
          const words = host.locator('[part~="error"]', { hasText: offerWords(lang).down });
          await words.waitFor();
          assert.equal(new URL(page.url()).pathname, '/', 'still on the checkout');
          assert.equal(reports.length, released);
          await saveScreenshot(page, `returning-confirm-${lang}-375-failed`);
          await page.unroute('**/obv/saved-accounts/confirm');

          // Pay again: confirmed, submitted by the same button, paid once.
          const confirmed = page.waitForResponse((response) => response.url().endsWith('/obv/saved-accounts/confirm'));
          const clickedAt = performance.now();
          await pay(page);
          const confirmMs = (await confirmed).request().timing();
          await page.locator('#transaction-status', { hasText: 'APPROVED' }).waitFor();
          console.log(
            `${lang}: confirm at Pay: ${(confirmMs.responseEnd - confirmMs.requestStart).toFixed(1)} ms request → answer, ` +
              `${(performance.now() - clickedAt).toFixed(0)} ms click → order page loaded`,
          );
          assert.equal(suite.demo.provider.stats.transactions, transactions + 1, 'paid once');
          const report = reports.at(-1);
          assert.equal(reports.length, released + 1, 'released once, at Pay');
          assert.equal(report?.outcome.status, 'success');
          assert.ok(report?.savedAccountId, "the saved account's id");
          assert.deepEqual(problems, []);
        } finally {
          await context.close();
        }
      },
    );
  }
});
