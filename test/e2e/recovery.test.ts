// Issue 30's recovery paths on the demo shop in real Chromium, in English and Spanish, at 1280 and 375 px:
// the consent survives a cancel at the bank and its retry (the next order offers the saved account); the
// checkout going offline says so at once, "Check now" answers while still offline, and a bank step finished
// meanwhile shows its account once the connection is back, never the closed-tab screen; a reload after
// linking keeps the account; a payment refused as stale brings the shopper back to a Reconnect that is in
// view, focused and says nothing was charged. Each saves its pictures in test-results/e2e/.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { consentWords } from '../../proxy/words/consent.ts';
import { offerWords } from '../../proxy/words/offer.ts';
import { catalogues } from '../../widget/strings.ts';
import { BANK_STEP_WORDS } from '../../proxy/words/bank-step.ts';
import {
  demoInChromium,
  element,
  elementStatus,
  linkAtBank,
  pay,
  payButton,
  saveScreenshot,
  STEP_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  waitForState,
} from './returning-shopper-steps.ts';

const BANK_WORDS = { en: { cancel: 'Cancel' }, es: { cancel: 'Cancelar' } } as const;
const WIDTHS = { en: 1280, es: 375 } as const;

describe('recovery in Chromium (issue 30)', { timeout: TEST_TIMEOUT_MS * 12 }, () => {
  const suite = demoInChromium();

  async function shopper(
    lang: 'en' | 'es',
    width: number = WIDTHS[lang],
  ): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
    const context = await suite.browser.newContext({ viewport: { width, height: width < 500 ? 812 : 900 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    return { context, page, problems };
  }
  const checkout = async (page: Page, lang: 'en' | 'es', state: 'idle' | 'saved' = 'idle') => {
    await page.goto(`${suite.demo.url}?lang=${lang}`);
    await waitForState(page, state);
  };

  for (const lang of ['en', 'es'] as const) {
    const s = { ...catalogues[lang], ...BANK_STEP_WORDS[lang] };
    it(
      `${lang}: tick → Link → cancel at the bank → "${s.linkAccount}" (still ticked) → sign in → pay: the next order offers the saved account`,
      { timeout: TEST_TIMEOUT_MS * 2 },
      async () => {
        const { context, page, problems } = await shopper(lang);
        try {
          await checkout(page, lang);
          const host = element(page);
          const box = host.getByRole('checkbox', { name: consentWords(lang).checkbox });
          await box.check();
          const [bank] = await Promise.all([
            context.waitForEvent('page'),
            host.getByRole('button', { name: s.linkAccount }).click(),
          ]);
          await bank
            .getByRole('button', { name: BANK_WORDS[lang].cancel, exact: true })
            .click()
            .catch(() => undefined);
          // Back on the first screen, as after the checkout's own Cancel, with the box as the shopper left it.
          await host.locator('[part~="status"]', { hasText: BANK_STEP_WORDS[lang].cancelled }).waitFor();
          assert.equal(await page.locator('obv-link-account').getAttribute('state'), 'idle');
          assert.equal(await box.isChecked(), true, 'the box is still there, ticked');
          await saveScreenshot(page, `recovery-${lang}-consent-after-cancel`);
          await linkAtBank(page, host.getByRole('button', { name: s.linkAccount }), lang);
          await waitForState(page, 'success');
          await pay(page);
          await page.locator('#transaction-status', { hasText: 'APPROVED' }).waitFor();
          await checkout(page, lang, 'saved');
          assert.equal(
            await host.getByRole('radio', { name: /Sandbox Federal Bank/ }).count(),
            1,
            'the saved account is offered',
          );
          assert.deepEqual(problems, []);
        } finally {
          await context.close();
        }
      },
    );

    it(
      `${lang}: offline while waiting says so at once; "${s.checkNow}" answers; the bank step finished meanwhile shows its account once back online, never the closed-tab screen`,
      { timeout: TEST_TIMEOUT_MS * 2 },
      async () => {
        const { context, page, problems } = await shopper(lang);
        const states: string[] = [];
        await page.exposeFunction('recordState', (state: string) => void states.push(state));
        await page.addInitScript(() => {
          addEventListener('online', () =>
            (window as unknown as { recordState(state: string): void }).recordState(`online event ${navigator.onLine}`),
          );
          addEventListener('offline', () =>
            (window as unknown as { recordState(state: string): void }).recordState(
              `offline event ${navigator.onLine}`,
            ),
          );
        });
        await page.addInitScript(() =>
          document.addEventListener('obv-state-change', (event) => {
            const host = event.target as HTMLElement & { shadowRoot: ShadowRoot };
            (window as unknown as { recordState(state: string): void }).recordState(
              `${(event as CustomEvent<{ state: string }>).detail.state}: ${host.shadowRoot.querySelector('.title')?.textContent ?? ''}`,
            );
          }),
        );
        // The bank step is finished in another browser profile that stays online (the checkout's goes offline).
        const elsewhere = await suite.browser.newContext();
        try {
          await checkout(page, lang);
          const [bank] = await Promise.all([
            context.waitForEvent('page'),
            element(page).getByRole('button', { name: s.linkAccount }).click(),
          ]);
          await waitForState(page, 'waiting');
          await bank.getByRole('button').first().waitFor();
          const consumerUrl = bank.url();
          const dropped = Date.now();
          await context.setOffline(true);
          await waitForState(page, 'error');
          const shownAfterMs = Date.now() - dropped;
          assert.match(await elementStatus(page), new RegExp(s.lostTitle));
          await saveScreenshot(page, `recovery-${lang}-offline`);
          // "Check now" while still offline: it says it could not reach the server, focus stays on it.
          const checkNow = element(page).getByRole('button', { name: s.checkNow });
          await checkNow.click();
          await element(page).locator('[part~="error"]', { hasText: s.networkHint }).waitFor();
          assert.equal(
            await checkNow.evaluate((button) => (button.getRootNode() as ShadowRoot).activeElement === button),
            true,
          );
          await saveScreenshot(page, `recovery-${lang}-check-now-offline`);
          // The shopper finishes at the bank; the bank tab goes (as the return page closes it).
          const bankElsewhere = await elsewhere.newPage();
          await bankElsewhere.goto(consumerUrl);
          await bankElsewhere.getByLabel(lang === 'es' ? 'Usuario' : 'Username').fill('user_good');
          await bankElsewhere.getByLabel(lang === 'es' ? 'Contraseña' : 'Password').fill('pass_good');
          await bankElsewhere
            .getByRole('button', { name: lang === 'es' ? 'Iniciar sesión' : 'Sign in', exact: true })
            .click();
          await bank.close();
          await context.setOffline(false);
          await waitForState(page, 'success').catch(async (error: Error) => {
            throw new Error(
              `${error.message}; states: ${states.join(' | ')}; now: ${await elementStatus(page)}; bank elsewhere: ${await bankElsewhere
                .locator('body')
                .innerText()
                .catch(() => 'closed')}`,
            );
          });
          assert.equal(
            await element(page).evaluate((host) => (host as HTMLElement & { value: string }).value.length > 0),
            true,
          );
          assert.ok(
            !states.some((state) => state.startsWith('waiting') && state.includes(s.closedTitle)),
            `never the closed-tab screen: ${states.join(' | ')}`,
          );
          await saveScreenshot(page, `recovery-${lang}-back-online`);
          console.log(`# ${lang}: "${s.lostTitle}" shown ${shownAfterMs} ms after the connection dropped`);
          assert.deepEqual(problems, []);
        } finally {
          await elsewhere.close();
          await context.close();
        }
      },
    );

    it(
      `${lang}: a reload after linking keeps the linked account (same link session)`,
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const { context, page, problems } = await shopper(lang);
        try {
          await checkout(page, lang);
          await linkAtBank(page, element(page).getByRole('button', { name: s.linkAccount }), lang);
          await waitForState(page, 'success');
          const linkRef = await element(page).evaluate((host) => (host as HTMLElement & { value: string }).value);
          const verifications = suite.demo.provider.stats.verificationRequests;
          await page.reload();
          await waitForState(page, 'success');
          assert.equal(
            await element(page).evaluate((host) => (host as HTMLElement & { value: string }).value),
            linkRef,
          );
          assert.equal(suite.demo.provider.stats.verificationRequests, verifications, 'no new bank step');
          await saveScreenshot(page, `recovery-${lang}-reload-after-linking`);
          await pay(page);
          await page.locator('#transaction-status', { hasText: 'APPROVED' }).waitFor();
          assert.deepEqual(problems, []);
        } finally {
          await context.close();
        }
      },
    );

    for (const width of [375, 1280]) {
      it(
        `${lang} at ${width} px: a payment refused as stale comes back to a Reconnect in view, focused, saying nothing was charged`,
        { timeout: TEST_TIMEOUT_MS * 2 },
        async () => {
          const { context, page, problems } = await shopper(lang, width);
          const words = offerWords(lang);
          try {
            // A saved account, then made stale by the bank.
            await checkout(page, lang);
            const host = element(page);
            await host.getByRole('checkbox', { name: consentWords(lang).checkbox }).check();
            await linkAtBank(page, host.getByRole('button', { name: s.linkAccount }), lang);
            await waitForState(page, 'success');
            await pay(page);
            await page.locator('#transaction-status', { hasText: 'APPROVED' }).waitFor();
            await checkout(page, lang, 'saved');
            await page.locator('#pay-button:enabled').waitFor();
            const paid = suite.demo.provider.stats.transactions;
            const accountToken = [...suite.demo.provider.state.transactions.values()].at(-1)!.accountToken;
            assert.ok(suite.demo.provider.markAccountStale(accountToken));
            await Promise.all([page.waitForURL((url) => url.pathname === '/'), payButton(page).click()]);
            await waitForState(page, 'idle');
            const reconnect = host.getByRole('button', { name: words.reconnect });
            await page.waitForFunction(() => {
              const el = document.querySelector('obv-link-account')!;
              return el.shadowRoot!.activeElement?.getAttribute('part') === 'button';
            });
            assert.equal(
              await reconnect.evaluate((button) => (button.getRootNode() as ShadowRoot).activeElement === button),
              true,
              'Reconnect has focus',
            );
            assert.match(
              await elementStatus(page),
              new RegExp(words.reconnectHint.split(':')[0]!),
              'nothing was charged',
            );
            const box = await reconnect.boundingBox();
            const viewport = page.viewportSize()!;
            assert.ok(
              box && box.y >= 0 && box.y + box.height <= viewport.height,
              `Reconnect in view: ${JSON.stringify(box)}`,
            );
            assert.equal(suite.demo.provider.stats.transactions, paid, 'nothing was charged');
            await saveScreenshot(page, `recovery-${lang}-${width}-stale`);
            await page.screenshot({ path: `test-results/e2e/recovery-${lang}-${width}-stale-viewport.png` });
            assert.deepEqual(problems, []);
          } finally {
            await context.close();
          }
        },
      );
    }
  }
});
