// The hosted link page in Chromium with mobile emulation (375 px, touch), English and Spanish, against the
// demo's proxy and sandbox bank with the bank step bound to the starting browser: link through the page and
// arrive at an https completion URL and at a custom-scheme one (the navigation intercepted), a cancel and
// an expiry each sent back with their status, a failure shown with its retry before "Return to the app"
// sends it back with its code, the page opened again after linking (same tab, new tab) saying so, dark
// mode, a saved account confirmed in one tap (and nothing released while the page is only open, as a mail
// scanner leaves it: no onOutcome, its reference not payable). axe finds
// nothing on any state of the page (the 404/410 pages included), nothing inline runs (CSP violations are
// console errors), and the completion URL carries none of the secrets the run knows of.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { RunningDemo } from '../../demo/start-demo.ts';
import type { OutcomeReport } from '../../proxy/index.ts';
import { consentWords } from '../../proxy/words/consent.ts';
import { offerWords } from '../../proxy/words/offer.ts';
import { linkSessionId } from '../../proxy/link-sessions/link-sessions.ts';
import { hostedPageText } from '../../proxy/words/hosted-page.ts';
import { startElementInChromium, type ElementInChromium } from '../helpers/element-in-chromium.ts';
import {
  clickThatMayClose,
  saveScreenshot,
  SCREENSHOT_DIR,
  startTestDemo,
  STEP_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
} from './harness.ts';

const MERCHANT_API_KEY = 'hosted-link-test-merchant-api-key-0001';
const LINK_BUTTON = { en: 'Link your bank account', es: 'Vincular cuenta bancaria' } as const;
const BANK = {
  en: { username: 'Username', password: 'Password', signIn: 'Sign in', cancel: 'Cancel' },
  es: { username: 'Usuario', password: 'Contraseña', signIn: 'Iniciar sesión', cancel: 'Cancelar' },
} as const;
const SAVED_TITLE = { en: 'Pay with a saved account', es: 'Paga con una cuenta guardada' } as const;
type Lang = 'en' | 'es';

interface Created {
  linkToken: string;
  hostedUrl: string;
  order: string;
}

describe('hosted link page in mobile Chromium (375 px, touch)', { timeout: TEST_TIMEOUT_MS * 12 }, () => {
  let demo: RunningDemo;
  /** A second proxy whose link sessions live 4 s: the expiry. */
  let shortDemo: RunningDemo;
  let chromium: ElementInChromium;
  let browser: Browser;
  let elementDir: string;
  const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const reports: OutcomeReport[] = [];
  /**
   * The merchant's report of `order`: onOutcome runs just after the page is told (the outcome is published
   * first), so the shopper may reach the completion URL a moment before the merchant's server has it.
   */
  async function reportOf(order: string): Promise<OutcomeReport | undefined> {
    const deadline = Date.now() + STEP_TIMEOUT_MS;
    for (;;) {
      const report = reports.find((entry) => entry.merchantTransactionId === order);
      if (report || Date.now() > deadline) return report;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  let orders = 0;

  before(async () => {
    chromium = await startElementInChromium(SCREENSHOT_DIR);
    browser = chromium.browser;
    elementDir = mkdtempSync(join(tmpdir(), 'obv-hosted-element-'));
    const hostedElementScript = join(elementDir, 'obv-link-account.js');
    writeFileSync(hostedElementScript, chromium.bundle);
    const proxy = {
      merchantApiKey: MERCHANT_API_KEY,
      hostedRedirectSchemes: ['myapp'],
      hostedElementScript,
      bindBankStep: true,
      bankStepGraceMs: 300,
      onOutcome: (report: OutcomeReport) => void reports.push(report),
    };
    [demo, shortDemo] = await Promise.all([
      startTestDemo({ proxy }),
      startTestDemo({ proxy: { ...proxy, linkSessionTtlMs: 4_000 } }),
    ]);
  });
  after(async () => {
    await chromium?.close();
    await demo?.close();
    await shortDemo?.close();
    if (elementDir) rmSync(elementDir, { recursive: true, force: true });
  });

  /** POST /link-sessions with `hosted`, as the merchant's server does. */
  async function createHosted(
    on: RunningDemo,
    lang: Lang,
    completionRedirectUri: string,
    { hosted, ...changes }: Record<string, unknown> = {},
  ): Promise<Created> {
    const order = `hosted-order-${++orders}`;
    const response = await fetch(new URL('/obv/link-sessions', on.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${MERCHANT_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        merchantUserId: 'app-user-7',
        merchantTransactionId: order,
        amount: '42.50',
        currency: 'USD',
        language: lang,
        consumer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
        hosted: { completionRedirectUri, state: `st-${orders}`, ...(hosted as object | undefined) },
        ...changes,
      }),
    });
    assert.equal(response.status, 201, await response.clone().text());
    return { ...((await response.json()) as Omit<Created, 'order'>), order };
  }

  interface Phone {
    context: BrowserContext;
    page: Page;
    /** Where the page sent the shopper: https arrivals (fulfilled by the test) and custom-scheme requests. */
    arrivals: string[];
    /** Console errors and uncaught exceptions (a CSP violation is one). */
    problems: string[];
  }

  async function openPhone(lang: Lang, width = 375): Promise<Phone> {
    const context = await browser.newContext({
      viewport: { width, height: width === 375 ? 740 : 900 },
      isMobile: width === 375,
      hasTouch: true,
      deviceScaleFactor: width === 375 ? 2 : 1,
      locale: lang,
    });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    const arrivals: string[] = [];
    // The merchant's https completion page: answered here, as the app's universal link or the shop's page.
    await context.route('https://shop.example/**', (route) => {
      arrivals.push(route.request().url());
      return route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: '<!doctype html><title>Back in the shop</title><h1>Back in the shop</h1>',
      });
    });
    const page = await context.newPage();
    // A custom scheme opens no page here: the navigation's request is what the test sees.
    page.on('request', (request) => {
      if (request.url().startsWith('myapp:')) arrivals.push(request.url());
    });
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    return { context, page, arrivals, problems };
  }

  async function waitForArrival(phone: Phone): Promise<URL> {
    const deadline = Date.now() + STEP_TIMEOUT_MS;
    while (phone.arrivals.length === 0) {
      if (Date.now() > deadline) throw new Error('the page sent the shopper nowhere');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return new URL(phone.arrivals[0]!);
  }

  async function axe(page: Page): Promise<string[]> {
    // Through the DevTools protocol: the page's CSP (rightly) refuses an injected <script>.
    await page.evaluate(`${axeSource}\n;void 0`);
    return page.evaluate(async () => {
      const { axe: run } = window as unknown as {
        axe: {
          run(context: Document, options: object): Promise<{ violations: Array<{ id: string; nodes: unknown[] }> }>;
        };
      };
      const tags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa'];
      const results = await run.run(document, { runOnly: { type: 'tag', values: tags } });
      return results.violations.map((violation) => `${violation.id} (${violation.nodes.length})`);
    });
  }

  async function waitForElementState(page: Page, state: string): Promise<void> {
    await page.locator(`obv-link-account[state="${state}"]`).waitFor({ timeout: STEP_TIMEOUT_MS });
  }

  /** Taps the element's main button and answers the sandbox bank's sign-in in `lang` as `username`, or cancels there. */
  async function atBank(page: Page, lang: Lang, username: string, trigger: string = LINK_BUTTON[lang]): Promise<void> {
    const words = BANK[lang];
    const [bank] = await Promise.all([
      page.context().waitForEvent('page'),
      page.locator('obv-link-account').getByRole('button', { name: trigger }).tap(),
    ]);
    await bank.getByLabel(words.username).waitFor();
    if (username !== 'cancel') {
      await bank.getByLabel(words.username).fill(username);
      await bank.getByLabel(words.password).fill('pass_good');
    }
    await clickThatMayClose(
      bank,
      bank.getByRole('button', { name: username === 'cancel' ? words.cancel : words.signIn, exact: true }),
    );
  }

  /** Every secret of the run: the link token and its stored id, sessions, link references, tokens, sealed strings, the API key. */
  function knownSecrets(created: Created[]): string[] {
    return [
      MERCHANT_API_KEY,
      ...created.flatMap((made) => [
        made.linkToken,
        made.linkToken.slice(3),
        linkSessionId(made.linkToken),
        new URL(made.hostedUrl).pathname.split('/').pop()!,
      ]),
      ...reports.flatMap((report) => [
        report.sessionId,
        ...(report.outcome.status === 'success'
          ? [
              report.outcome.linkRef,
              report.outcome.accountToken,
              ...(report.outcome.savedAccount
                ? [report.outcome.savedAccount.sealed, report.outcome.savedAccount.accountId]
                : []),
            ]
          : []),
      ]),
    ];
  }

  function assertCompletion(
    arrived: URL,
    expected: { base: string; status: string; state: string; code?: string },
    created: Created[],
  ): void {
    assert.equal(`${arrived.protocol}//${arrived.host}${arrived.pathname}`, expected.base);
    const params = [
      ['status', expected.status],
      ['state', expected.state],
      ...(expected.code ? [['code', expected.code]] : []),
    ];
    assert.deepEqual([...arrived.searchParams.entries()], params, "status, state and a failure's code, nothing else");
    const secrets = knownSecrets(created);
    assert.ok(secrets.length >= 5);
    for (const secret of secrets) assert.ok(!arrived.href.includes(secret), 'the completion URL carries no secret');
  }

  const stateOf = (created: Created) => `st-${created.order.split('-').pop()}`;

  for (const lang of ['en', 'es'] as const) {
    it(
      `${lang}: links through the hosted page and arrives at the https completion URL with status=linked`,
      { timeout: TEST_TIMEOUT_MS * 2 },
      async () => {
        const phone = await openPhone(lang);
        try {
          const created = await createHosted(demo, lang, 'https://shop.example/linked');
          const { page } = phone;
          await page.goto(created.hostedUrl);
          await waitForElementState(page, 'idle');
          const text = hostedPageText(lang);
          await page.getByRole('heading', { level: 1, name: text.title }).waitFor();
          assert.match(
            await page.locator('.amount dd').innerText(),
            /^\$42\.50$/,
            'US amounts for US shoppers, in Spanish too',
          );
          assert.match(await page.locator('.shop').innerText(), /Northwind Roasters/);
          assert.deepEqual(await axe(page), [], 'idle');
          await saveScreenshot(page, `hosted-${lang}-375-idle`);
          assert.equal(
            await page.evaluate(() => document.documentElement.scrollWidth),
            375,
            'no sideways scrolling at 375 px',
          );
          await atBank(page, lang, 'user_good');
          const arrived = await waitForArrival(phone);
          assertCompletion(
            arrived,
            { base: 'https://shop.example/linked', status: 'linked', state: stateOf(created) },
            [created],
          );
          await page.waitForURL(/^https:\/\/shop\.example\//);
          assert.deepEqual(phone.problems, []);
          // The merchant's server has the details: the outcome of this order, the link reference to pay with.
          const report = await reportOf(created.order);
          assert.equal(report?.outcome.status, 'success');
        } finally {
          await phone.context.close();
        }
      },
    );

    it(
      `${lang}: a custom-scheme completion (myapp://) gets status=linked; the page then says "You can close this page" with a link back`,
      { timeout: TEST_TIMEOUT_MS * 2 },
      async () => {
        const phone = await openPhone(lang);
        try {
          const created = await createHosted(demo, lang, 'myapp://linked');
          const { page } = phone;
          await page.goto(created.hostedUrl);
          await waitForElementState(page, 'idle');
          await atBank(page, lang, 'user_good');
          const arrived = await waitForArrival(phone);
          assertCompletion(arrived, { base: 'myapp://linked', status: 'linked', state: stateOf(created) }, [created]);
          // No app here: the page stays, and says so.
          const text = hostedPageText(lang);
          await page.getByRole('heading', { name: text.doneTitle }).waitFor();
          await page.getByText(text.outcomes.linked, { exact: true }).waitFor();
          assert.equal(
            await page.evaluate(() => document.activeElement?.id),
            'done-title',
            'the focus moves to what the page now says',
          );
          assert.equal(
            await page.locator('obv-link-account').isVisible(),
            false,
            'nothing left to tap but the way back',
          );
          const back = page.getByRole('link', { name: text.returnToApp });
          assert.equal(await back.getAttribute('href'), arrived.href);
          assert.deepEqual(await axe(page), [], 'done');
          await saveScreenshot(page, `hosted-${lang}-375-done`);
          assert.deepEqual(
            phone.problems.filter((problem) => !/myapp/.test(problem)),
            [],
          );
        } finally {
          await phone.context.close();
        }
      },
    );
  }

  it(
    'en: a cancel at the bank sends the shopper back with status=cancelled',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const phone = await openPhone('en');
      try {
        const created = await createHosted(demo, 'en', 'myapp://linked');
        await phone.page.goto(created.hostedUrl);
        await waitForElementState(phone.page, 'idle');
        await atBank(phone.page, 'en', 'cancel');
        assertCompletion(
          await waitForArrival(phone),
          { base: 'myapp://linked', status: 'cancelled', state: stateOf(created) },
          [created],
        );
      } finally {
        await phone.context.close();
      }
    },
  );

  it(
    'es: a cancel in the page while the bank is open sends the shopper back with status=cancelled',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const phone = await openPhone('es');
      try {
        const created = await createHosted(demo, 'es', 'https://shop.example/linked');
        const { page } = phone;
        await page.goto(created.hostedUrl);
        await waitForElementState(page, 'idle');
        await Promise.all([
          page.context().waitForEvent('page'),
          page.locator('obv-link-account').getByRole('button', { name: LINK_BUTTON.es }).tap(),
        ]);
        await waitForElementState(page, 'waiting');
        assert.deepEqual(await axe(page), [], 'waiting');
        await saveScreenshot(page, 'hosted-es-375-waiting');
        await page.locator('obv-link-account').getByRole('button', { name: 'Cancelar' }).tap();
        assertCompletion(
          await waitForArrival(phone),
          { base: 'https://shop.example/linked', status: 'cancelled', state: stateOf(created) },
          [created],
        );
      } finally {
        await phone.context.close();
      }
    },
  );

  for (const lang of ['en', 'es'] as const) {
    it(
      `${lang}: a failure at the bank (user_bad) is shown with its retry first; "Return to the app" then sends status=failed and its code`,
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const phone = await openPhone(lang);
        try {
          const created = await createHosted(demo, lang, 'myapp://linked');
          const { page } = phone;
          const text = hostedPageText(lang);
          await page.goto(created.hostedUrl);
          await waitForElementState(page, 'idle');
          await atBank(page, lang, 'user_bad');
          await waitForElementState(page, 'failure');
          // The failure and its retry, on the page: nothing sent back to the app yet.
          const retry = page
            .locator('obv-link-account')
            .getByRole('button', { name: lang === 'en' ? 'Link another account' : 'Vincular otra cuenta' });
          await retry.waitFor();
          const giveUp = page.getByRole('button', { name: text.returnToApp });
          await giveUp.waitFor();
          await page.waitForTimeout(1_500);
          assert.deepEqual(phone.arrivals, [], 'the page does not leave by itself');
          assert.deepEqual(await axe(page), [], 'the failure with its retry');
          await saveScreenshot(page, `hosted-${lang}-375-failure`);
          await giveUp.tap();
          assertCompletion(
            await waitForArrival(phone),
            { base: 'myapp://linked', status: 'failed', state: stateOf(created), code: 'ACCOUNT_NOT_VERIFIED' },
            [created],
          );
          await page.getByText(text.outcomes.failed, { exact: true }).waitFor();
          assert.deepEqual(await axe(page), [], 'done after a failure');
          await saveScreenshot(page, `hosted-${lang}-375-failed`);
        } finally {
          await phone.context.close();
        }
      },
    );

    it(
      `${lang}: after a failure the retry links, and the page sends status=linked`,
      { timeout: TEST_TIMEOUT_MS * 2 },
      async () => {
        const phone = await openPhone(lang);
        try {
          const created = await createHosted(demo, lang, 'https://shop.example/linked');
          const { page } = phone;
          await page.goto(created.hostedUrl);
          await waitForElementState(page, 'idle');
          await atBank(page, lang, 'user_bad');
          await waitForElementState(page, 'failure');
          await atBank(page, lang, 'user_good', lang === 'en' ? 'Link another account' : 'Vincular otra cuenta');
          assertCompletion(
            await waitForArrival(phone),
            { base: 'https://shop.example/linked', status: 'linked', state: stateOf(created) },
            [created],
          );
        } finally {
          await phone.context.close();
        }
      },
    );

    it(
      `${lang}: opened again after linking, in the same tab (Back from the app) or a new one, it says so with the way back, and goes nowhere by itself`,
      { timeout: TEST_TIMEOUT_MS * 2 },
      async () => {
        const phone = await openPhone(lang);
        try {
          const created = await createHosted(demo, lang, 'https://shop.example/linked');
          const { page } = phone;
          const text = hostedPageText(lang);
          await page.goto(created.hostedUrl);
          await waitForElementState(page, 'idle');
          await atBank(page, lang, 'user_good');
          await waitForArrival(phone);
          await page.waitForURL(/^https:\/\/shop\.example\//);
          // Back from the app: the same tab, the element shows the account it linked here.
          await page.goBack();
          await page.getByText(text.alreadyMessage, { exact: true }).waitFor();
          const back = page.getByRole('link', { name: text.returnToApp });
          assert.match((await back.getAttribute('href'))!, /^https:\/\/shop\.example\/linked\?status=linked&state=/);
          await page.waitForTimeout(1_500);
          assert.equal(phone.arrivals.length, 1, 'no second trip to the app by itself');
          assert.deepEqual(await axe(page), [], 'already linked');
          await saveScreenshot(page, `hosted-${lang}-375-already`);
          // A new tab of the same browser (the app opened the link again).
          const again = await phone.context.newPage();
          await again.goto(created.hostedUrl);
          await again.getByText(text.alreadyMessage, { exact: true }).waitFor();
          assert.match(
            (await again.getByRole('link', { name: text.returnToApp }).getAttribute('href'))!,
            /status=linked/,
          );
          assert.equal(phone.arrivals.length, 1);
        } finally {
          await phone.context.close();
        }
      },
    );

    it(`${lang}: in dark mode the element's card is dark like the page`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const phone = await openPhone(lang);
      try {
        await phone.page.emulateMedia({ colorScheme: 'dark' });
        const created = await createHosted(demo, lang, 'https://shop.example/linked');
        await phone.page.goto(created.hostedUrl);
        await waitForElementState(phone.page, 'idle');
        const card = await phone.page
          .locator('obv-link-account')
          .evaluate((el) => getComputedStyle(el.shadowRoot!.querySelector('[part~="base"]')!).backgroundColor);
        assert.equal(card, 'rgb(31, 36, 43)');
        assert.deepEqual(await axe(phone.page), [], 'dark');
        await saveScreenshot(phone.page, `hosted-${lang}-375-dark`);
      } finally {
        await phone.context.close();
      }
    });

    it(
      `${lang}: a link session that expires on the page sends the shopper back with status=expired; the URL then shows a 410 page`,
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const phone = await openPhone(lang);
        try {
          const created = await createHosted(shortDemo, lang, 'https://shop.example/linked');
          await phone.page.goto(created.hostedUrl);
          await waitForElementState(phone.page, 'idle');
          assertCompletion(
            await waitForArrival(phone),
            { base: 'https://shop.example/linked', status: 'expired', state: stateOf(created) },
            [created],
          );
          await phone.page.waitForURL(/^https:\/\/shop\.example\//);
          const again = await phone.page.goto(created.hostedUrl);
          assert.equal(again?.status(), 410);
          const text = hostedPageText(lang);
          await phone.page.getByRole('heading', { name: text.expiredTitle }).waitFor();
          assert.deepEqual(await axe(phone.page), [], 'expired');
          await saveScreenshot(phone.page, `hosted-${lang}-375-expired`);
        } finally {
          await phone.context.close();
        }
      },
    );

    it(
      `${lang}: an unknown hosted URL shows a clear 404 page in the browser's language`,
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const phone = await openPhone(lang);
        try {
          const response = await phone.page.goto(new URL(`/obv/hosted/hl_${'Q'.repeat(32)}`, demo.url).href);
          assert.equal(response?.status(), 404);
          await phone.page.getByRole('heading', { name: hostedPageText(lang).unknownTitle }).waitFor();
          assert.deepEqual(await axe(phone.page), [], 'unknown');
          await saveScreenshot(phone.page, `hosted-${lang}-375-unknown`);
        } finally {
          await phone.context.close();
        }
      },
    );

    it(
      `${lang}: saves an account with consent on the hosted page, a later hosted page offers it and one tap confirms it, and a stale one is reconnected`,
      { timeout: TEST_TIMEOUT_MS * 2 },
      async () => {
        let phone = await openPhone(lang);
        try {
          const user = `saver-${lang}`;
          const first = await createHosted(demo, lang, 'myapp://linked', {
            merchantUserId: user,
            allowSaving: true,
            hosted: { allowSaving: true },
          });
          const { page } = phone;
          await page.goto(first.hostedUrl);
          await waitForElementState(page, 'idle');
          const box = page.locator('obv-link-account').getByRole('checkbox', { name: consentWords(lang).checkbox });
          await box.tap();
          assert.equal(await box.isChecked(), true);
          assert.deepEqual(await axe(page), [], 'consent');
          await saveScreenshot(page, `hosted-${lang}-375-consent`);
          await atBank(page, lang, 'user_good');
          assertCompletion(
            await waitForArrival(phone),
            { base: 'myapp://linked', status: 'linked', state: stateOf(first) },
            [first],
          );
          const saved = (await reportOf(first.order))?.outcome;
          assert.ok(saved?.status === 'success' && saved.savedAccount, "the merchant's server got the saved account");

          // A fresh tab: the custom-scheme navigation above may leave the browser's "open the app?" prompt on this one.
          await phone.context.close();
          phone = await openPhone(lang);
          const { page: later } = phone;
          const second = await createHosted(demo, lang, 'https://shop.example/linked', {
            merchantUserId: user,
            savedAccounts: [saved.savedAccount.sealed],
          });
          let tabs = 0;
          phone.context.on('page', () => void tabs++);
          // The reference the choice gave the page, read off the wire: the element holds it back until Continue.
          const used = later.waitForResponse((response) => response.url().endsWith('/saved-accounts/use'));
          await later.goto(second.hostedUrl);
          await waitForElementState(later, 'saved');
          await later.locator('obv-link-account').getByRole('radiogroup', { name: SAVED_TITLE[lang] }).waitFor();
          const confirm = later.getByRole('button', { name: hostedPageText(lang).continueWithAccount });
          await confirm.waitFor();
          assert.deepEqual(phone.arrivals, [], 'nothing is confirmed before the shopper taps');
          // Opened and left, as a mail scanner would: the page has the account, the merchant nothing (no
          // onOutcome, and link.succeeded goes out with it), and its reference pays nothing.
          const chosenRef = ((await (await used).json()) as { linkRef: string }).linkRef;
          assert.ok(chosenRef);
          assert.equal(
            await later.locator('obv-link-account').evaluate((el) => (el as HTMLElement & { value: string }).value),
            '',
            'no form value before Continue',
          );
          assert.equal(
            reports.find((entry) => entry.merchantTransactionId === second.order),
            undefined,
            'nothing released before Continue',
          );
          const early = await fetch(new URL('/obv/transactions', demo.url), {
            method: 'POST',
            headers: { authorization: `Bearer ${MERCHANT_API_KEY}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              linkRef: chosenRef,
              merchantUserId: user,
              merchantTransactionId: second.order,
              amount: '42.50',
              currency: 'USD',
            }),
          });
          assert.equal(early.status, 403, 'not payable before Continue');
          assert.deepEqual(await axe(later), [], 'saved');
          await saveScreenshot(later, `hosted-${lang}-375-saved`);
          await confirm.tap();
          assertCompletion(
            await waitForArrival(phone),
            { base: 'https://shop.example/linked', status: 'linked', state: stateOf(second) },
            [first, second],
          );
          assert.equal(tabs, 0, 'no bank tab');
          assert.equal((await reportOf(second.order))?.outcome.status, 'success');

          // The bank marked it stale: a hosted page with `reauthorize` offers "Reconnect", the bank step, the way back.
          await phone.context.close();
          phone = await openPhone(lang);
          const third = await createHosted(demo, lang, 'https://shop.example/linked', {
            merchantUserId: user,
            reauthorize: saved.savedAccount.sealed,
          });
          await phone.page.goto(third.hostedUrl);
          await waitForElementState(phone.page, 'idle');
          const reconnect = offerWords(lang).reconnect;
          await phone.page.locator('obv-link-account').getByRole('button', { name: reconnect }).waitFor();
          assert.deepEqual(await axe(phone.page), [], 'reconnect');
          await saveScreenshot(phone.page, `hosted-${lang}-375-reconnect`);
          await atBank(phone.page, lang, 'user_good', reconnect);
          assertCompletion(
            await waitForArrival(phone),
            { base: 'https://shop.example/linked', status: 'linked', state: stateOf(third) },
            [first, second, third],
          );
        } finally {
          await phone.context.close();
        }
      },
    );

    it(`${lang}: the page at 1280 px (a desktop browser)`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const phone = await openPhone(lang, 1280);
      try {
        const created = await createHosted(demo, lang, 'myapp://linked');
        await phone.page.goto(created.hostedUrl);
        await waitForElementState(phone.page, 'idle');
        assert.deepEqual(await axe(phone.page), []);
        await saveScreenshot(phone.page, `hosted-${lang}-1280-idle`);
      } finally {
        await phone.context.close();
      }
    });
  }
});
