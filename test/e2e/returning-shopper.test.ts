// A returning shopper in Chromium, in English and Spanish, on the demo shop: the first purchase saves the
// account (the consent words on screen, the consent record reaching the shop's server), the next one pays
// with the saved account in one click (no bank tab, no upstream verification), a stale account leads to
// "Reconnect", the bank step and a payment (the same account: renewed), and removing the account (asked in the element) stops it being offered and reaches
// the shop's server. All along, the browser never sees a saved account's sealed string or its token:
// not in a response, a WebSocket frame, an event, the DOM, storage or the form value.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { consentWords } from '../../proxy/words/consent.ts';
import { SHOP } from '../../demo/checkout/server/orders.ts';
import { offerWords } from '../../proxy/words/offer.ts';
import {
  demoInChromium,
  element,
  expectNoLeak,
  linkAtBank,
  pay,
  payButton,
  saveScreenshot,
  STEP_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  waitForState,
} from './returning-shopper-steps.ts';

const LINK_BUTTON = { en: 'Link your bank account', es: 'Vincular cuenta bancaria' } as const;

describe('a returning shopper in Chromium', { timeout: TEST_TIMEOUT_MS * 8 }, () => {
  const suite = demoInChromium();

  for (const lang of ['en', 'es'] as const) {
    it(
      `${lang}: saves with consent, pays again in one click, reconnects a stale account, and removes it`,
      { timeout: TEST_TIMEOUT_MS * 4 },
      async () => {
        const context = await suite.browser.newContext({ viewport: { width: 1280, height: 960 } });
        context.setDefaultTimeout(STEP_TIMEOUT_MS);
        const seen = await recordEverything(context);
        const page = await context.newPage();
        const problems: string[] = [];
        page.on('pageerror', (error) => problems.push(error.message));
        const words = offerWords(lang);
        const consent = consentWords(lang, SHOP.name);
        const checkout = async (state: 'idle' | 'saved') => {
          await page.goto(`${suite.demo.url}?lang=${lang}`);
          await waitForState(page, state);
        };
        try {
          // 1. First purchase: the consent box, unchecked, with the debit authorization in plain words.
          await checkout('idle');
          const host = element(page);
          const box = host.getByRole('checkbox', { name: consent.checkbox });
          assert.equal(await box.isChecked(), false);
          assert.equal(await host.locator('#ct').innerText(), consent.text);
          await saveScreenshot(page, `returning-${lang}-1-consent`);
          await box.check();
          await linkAtBank(page, host.getByRole('button', { name: LINK_BUTTON[lang] }), lang);
          await waitForState(page, 'success');
          await pay(page);
          await page.locator('#transaction-status', { hasText: 'APPROVED' }).waitFor();
          const shopper = `shopper-${(await context.cookies()).find((c) => c.name === 'nr_shopper')!.value}`;
          const [saved] = suite.demo.savedAccounts.list(shopper);
          assert.ok(saved, "the shop's server saved the account");
          assert.equal(saved.fiName, 'Sandbox Federal Bank');
          const record = saved.consent as Record<string, string>;
          assert.deepEqual(
            [record.version, record.lang, record.checkbox, record.text],
            [consent.version, lang, consent.checkbox, `${consent.text} ${consent.details}`],
            'the exact words shown (the folded details too)',
          );
          assert.match(record.userAgent ?? '', /Chrome/);
          assert.equal(record.ip, '127.0.0.1');
          assert.ok(Date.parse(record.acceptedAt ?? '') > 0);

          // 2. Next purchase: the saved account, preselected and ready; Pay is the one click (which confirms it).
          const used = page.waitForResponse((response) => response.url().endsWith('/saved-accounts/use'));
          await checkout('saved');
          const radio = host
            .getByRole('radiogroup', { name: words.title })
            .getByRole('radio', { name: /Sandbox Federal Bank/ });
          assert.equal(await radio.isChecked(), true);
          await page.locator('#pay-button:enabled').waitFor();
          await saveScreenshot(page, `returning-${lang}-2-saved`);
          const oneClickRef = ((await (await used).json()) as { linkRef: string }).linkRef;
          assert.ok(oneClickRef);
          const verifications = suite.demo.provider.stats.verificationRequests;
          const transactions = suite.demo.provider.stats.transactions;
          const tabs = context.pages().length;
          await pay(page);
          await page.locator('#transaction-status', { hasText: 'APPROVED' }).waitFor();
          assert.equal(suite.demo.provider.stats.verificationRequests, verifications, 'no upstream verification');
          assert.equal(suite.demo.provider.stats.transactions, transactions + 1, 'paid once');
          assert.equal(context.pages().length, tabs, 'no bank tab opened');

          // 3. The bank marks the account stale: Pay comes back with "Reconnect …", the bank step, a payment.
          // The token the one-click payment spent (the shop never had it: the proxy opened the saved account).
          const accountToken = [...suite.demo.provider.state.transactions.values()].at(-1)!.accountToken;
          assert.ok(suite.demo.provider.markAccountStale(accountToken));
          await checkout('saved');
          await page.locator('#pay-button:enabled').waitFor();
          await Promise.all([page.waitForURL((url) => url.pathname === '/'), payButton(page).click()]);
          await waitForState(page, 'idle');
          const title = host.locator('.title');
          await title
            .filter({
              hasText: `${words.reconnect} Sandbox Federal Bank ${lang === 'en' ? 'Checking' : 'Corriente'} ••••4321`,
            })
            .waitFor();
          await saveScreenshot(page, `returning-${lang}-3-reconnect`);
          await linkAtBank(page, host.getByRole('button', { name: words.reconnect, exact: true }), lang);
          const sent = [...suite.demo.provider.state.verifications.values()].at(-1)!;
          assert.equal(sent.request.accountToken, accountToken, 'the verification request carries the saved token');
          await waitForState(page, 'success');
          await pay(page);
          await page.locator('#transaction-status', { hasText: 'APPROVED' }).waitFor();
          assert.equal(suite.demo.savedAccounts.list(shopper).length, 1, 'the same saved account, renewed');
          assert.equal(suite.demo.savedAccounts.list(shopper)[0]!.accountId, saved.accountId);

          // 4. Removing it, confirmed in the element (the question names the account, in the link session's
          // language): no longer offered, and the shop's server forgot it.
          await checkout('saved');
          await host.getByRole('button', { name: new RegExp(`^${words.remove} Sandbox Federal Bank`) }).click();
          const question = host.getByRole('group', {
            name: new RegExp(`${words.removeConfirm.split('{account}')[0]}Sandbox Federal Bank`),
          });
          await question.waitFor();
          await saveScreenshot(page, `returning-${lang}-4-remove`);
          await question.getByRole('button', { name: words.remove, exact: true }).click();
          await waitForState(page, 'idle');
          assert.deepEqual(suite.demo.savedAccounts.list(shopper), [], "the shop's server removed it");
          await checkout('idle');
          assert.equal(await host.getByRole('radio').count(), 0, 'not offered again');

          // Nothing the browser saw held a sealed saved account or its token.
          const secrets = [
            accountToken,
            saved.sealed,
            suite.demo.savedAccounts.list(shopper)[0]?.sealed ?? saved.sealed,
          ];
          await expectNoLeak(page, seen, secrets);
          assert.ok(
            seen.some((text) => text.includes(oneClickRef)),
            'the recording holds what the browser did see (the link reference)',
          );
          assert.deepEqual(problems, []);
        } finally {
          await context.close();
        }
      },
    );
  }

  it('offers nothing from another shopper: each cookie is its own user', { timeout: TEST_TIMEOUT_MS }, async () => {
    const context = await suite.browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(suite.demo.url);
      await waitForState(page, 'idle');
      assert.equal(await element(page).getByRole('radio').count(), 0);
    } finally {
      await context.close();
    }
  });
});

/** Every response body, WebSocket frame and element event of the context's pages, as text. */
async function recordEverything(context: BrowserContext): Promise<string[]> {
  const seen: string[] = [];
  await context.exposeBinding('recordObvEvent', (_source, text: string) => void seen.push(text));
  await context.addInitScript(() => {
    for (const name of [
      'obv-start',
      'obv-open',
      'obv-success',
      'obv-failure',
      'obv-cancel',
      'obv-error',
      'obv-state-change',
    ]) {
      document.addEventListener(
        name,
        (event) =>
          void (window as unknown as { recordObvEvent(text: string): void }).recordObvEvent(
            JSON.stringify((event as CustomEvent).detail),
          ),
      );
    }
  });
  context.on('page', (page: Page) => {
    page.on(
      'response',
      (response) =>
        void response.text().then(
          (body) => seen.push(body),
          () => undefined,
        ),
    );
    page.on('websocket', (socket) => {
      socket.on('framereceived', ({ payload }) => void seen.push(String(payload)));
      socket.on('framesent', ({ payload }) => void seen.push(String(payload)));
    });
  });
  return seen;
}
