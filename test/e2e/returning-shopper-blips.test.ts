// A returning shopper's saved list through a network blip, the rate limit and a proxy failure, in a
// headful Chromium (a real `offline`/`online` pair, real tabs) on the demo shop, in English and Spanish:
// the list stays on screen with the account chosen and says why in the link session's language; a choice
// made offline is used by itself once the browser is back online; "Try again" after a 429, and a click on
// the account after a 5xx, choose the same account again. Never a bank tab instead.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { RunningDemo } from '../../demo/start-demo.ts';
import { SHOP } from '../../demo/checkout/server/orders.ts';
import { consentWords } from '../../proxy/words/consent.ts';
import { offerWords } from '../../proxy/words/offer.ts';
import { launchHeadfulChromium, type HeadfulChromium } from '../helpers/headful-chromium.ts';
import {
  element,
  linkAtBank,
  pay,
  payButton,
  saveScreenshot,
  startTestDemo,
  STEP_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  waitForState,
} from './returning-shopper-steps.ts';

const LINK_BUTTON = { en: 'Link your bank account', es: 'Vincular cuenta bancaria' } as const;
const TRY_AGAIN = { en: 'Try again', es: 'Intentar de nuevo' } as const;

describe(
  "a returning shopper's list through a blip, a 429 and a failed choice (headful Chromium)",
  { timeout: TEST_TIMEOUT_MS * 8 },
  () => {
    let demo: RunningDemo;
    let chromium: HeadfulChromium;

    before(async () => {
      [demo, chromium] = await Promise.all([startTestDemo(), launchHeadfulChromium()]);
      chromium.context.setDefaultTimeout(STEP_TIMEOUT_MS);
    });
    after(async () => {
      await chromium?.close();
      await demo?.close();
    });

    /** The chosen account's label once the proxy gave its link (the form value comes with the confirmation). */
    const value = (page: Page) =>
      element(page).evaluate(
        (el) => (el as HTMLElement & { account?: { accountLabel: string } }).account?.accountLabel ?? '',
      );
    const problem = (page: Page) => element(page).locator('[part~="error"]');
    const checked = (page: Page) =>
      element(page).evaluate((el) =>
        [...el.shadowRoot!.querySelectorAll<HTMLInputElement>('input[type=radio]')].map((radio) => radio.checked),
      );

    for (const lang of ['en', 'es'] as const) {
      it(
        `${lang}: the list survives offline, a 429 and a 5xx, and chooses the same account again`,
        { timeout: TEST_TIMEOUT_MS * 4 },
        async () => {
          // A new shopper for each language (the demo knows shoppers by a cookie).
          await chromium.context.clearCookies();
          const page = await chromium.context.newPage();
          const words = offerWords(lang);
          const consent = consentWords(lang, SHOP.name);
          const host = element(page);
          const checkout = async (state: 'idle' | 'saved') => {
            await page.goto(`${demo.url}?lang=${lang}`);
            await waitForState(page, state);
          };
          let bankTabs = 0;
          try {
            // Two saved accounts: checking on the first purchase, savings through "Use another account".
            await checkout('idle');
            await host.getByRole('checkbox', { name: consent.checkbox }).check();
            await linkAtBank(page, host.getByRole('button', { name: LINK_BUTTON[lang] }), lang);
            await waitForState(page, 'success');
            await pay(page);
            await checkout('saved');
            await host.getByRole('button', { name: words.useAnother }).click();
            await host.getByRole('checkbox', { name: consent.checkbox }).check();
            await linkAtBank(page, host.getByRole('button', { name: LINK_BUTTON[lang] }), lang, 'user_savings');
            await waitForState(page, 'success');
            await pay(page);

            await checkout('saved');
            await page.waitForFunction(
              () =>
                (document.querySelector('obv-link-account') as HTMLElement & { account?: object }).account !==
                undefined,
            );
            assert.deepEqual(await checked(page), [true, false]);
            chromium.context.on('page', () => bankTabs++);
            const radios = host.getByRole('radio');

            // Offline: the other account chosen, the list stays and says so; back online, it is used by itself.
            await chromium.context.setOffline(true);
            await radios.nth(1).click();
            await problem(page).filter({ hasText: words.offline }).waitFor();
            assert.equal(await page.locator('obv-link-account').getAttribute('state'), 'saved', 'the list stays');
            assert.deepEqual(await checked(page), [false, true], 'the account chosen stays chosen');
            assert.equal(await value(page), '');
            assert.equal(
              await page.locator('#payment-form').evaluate((form) => (form as HTMLFormElement).checkValidity()),
              false,
              'nothing to pay with until the account is ready',
            );
            assert.equal(await payButton(page).isDisabled(), true, "the shop's Pay follows the element's change event");
            await saveScreenshot(page, `returning-${lang}-offline`);
            await chromium.context.setOffline(false);
            await problem(page).waitFor({ state: 'detached' });
            await page.waitForFunction(
              () =>
                (document.querySelector('obv-link-account') as HTMLElement & { account?: object }).account !==
                undefined,
            );
            assert.deepEqual(await checked(page), [false, true]);
            await page.locator('#pay-button:enabled').waitFor();

            // The rate limit (429), worded as one: "Try again" chooses the same account.
            await page.route(
              '**/obv/saved-accounts/use',
              (route) =>
                route.fulfill({
                  status: 429,
                  contentType: 'application/problem+json',
                  body: JSON.stringify({
                    type: 'urn:obv-link:problem:rate-limited',
                    title: 'Too many requests',
                    status: 429,
                  }),
                }),
              { times: 1 },
            );
            await radios.nth(0).click();
            await problem(page).filter({ hasText: words.busy }).waitFor();
            assert.deepEqual(await checked(page), [true, false]);
            await saveScreenshot(page, `returning-${lang}-rate-limited`);
            await host.getByRole('button', { name: TRY_AGAIN[lang] }).click();
            await problem(page).waitFor({ state: 'detached' });
            await page.waitForFunction(
              () =>
                (document.querySelector('obv-link-account') as HTMLElement & { account?: object }).account !==
                undefined,
            );

            // The proxy failed (503): said so; a click on the chosen account tries it again.
            await page.route(
              '**/obv/saved-accounts/use',
              (route) =>
                route.fulfill({
                  status: 503,
                  contentType: 'application/problem+json',
                  body: JSON.stringify({ title: 'Service Unavailable', status: 503 }),
                }),
              { times: 1 },
            );
            await radios.nth(1).click();
            await problem(page).filter({ hasText: words.down }).waitFor();
            await radios.nth(1).click();
            await problem(page).waitFor({ state: 'detached' });
            await page.waitForFunction(
              () =>
                (document.querySelector('obv-link-account') as HTMLElement & { account?: object }).account !==
                undefined,
            );
            assert.deepEqual(await checked(page), [false, true]);
            assert.equal(bankTabs, 0, 'never a bank tab instead of the saved account');
          } finally {
            await chromium.context.setOffline(false).catch(() => undefined);
            await page.close();
          }
        },
      );
    }
  },
);
