// The demo checkout end to end in Chromium: the consumer links an account at the sandbox bank in a new
// tab and pays; a bank that cannot verify, then "Link another account"; a cancel at the bank.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { RunningDemo } from '../../demo/start-demo.ts';
import {
  STEP_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  cancelAtBank,
  element,
  elementStatus,
  launchChromium,
  loggedEvents,
  openBankTab,
  pay,
  payButton,
  saveScreenshot,
  signInAtBank,
  startLinking,
  startTestDemo,
  waitForState,
  withShopper,
} from './harness.ts';

/** Known to the test so it can read the linked account server side, as the merchant's server does. */
const MERCHANT_API_KEY = 'test-merchant-api-key-checkout-0123456789';

async function expectApproved(page: Page): Promise<void> {
  await page.getByRole('heading', { name: 'Payment approved' }).waitFor();
  assert.equal(await page.locator('#transaction-status').textContent(), 'APPROVED');
  assert.match((await page.locator('#transaction-id').textContent()) ?? '', /\S{6,}/);
}

describe('demo checkout in a browser', { timeout: TEST_TIMEOUT_MS * 4 }, () => {
  let demo: RunningDemo;
  let browser: Browser;

  before(async () => {
    [demo, browser] = await Promise.all([
      startTestDemo({ proxy: { merchantApiKey: MERCHANT_API_KEY } }),
      launchChromium(),
    ]);
  });

  after(async () => {
    await browser?.close();
    await demo?.close();
  });

  it(
    'links user_good in a new tab and pays: the result page shows the approved transaction',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      await withShopper(browser, demo, 'pay-with-linked-account', async ({ page, problems }) => {
        assert.equal(await payButton(page).isDisabled(), true, 'Pay is disabled before an account is linked');

        const bank = await startLinking(page);
        assert.equal(new URL(bank.url()).origin, new URL(demo.provider.url).origin, 'the bank page is the provider’s');
        // Listening before the sign-in: the tab may close before a later check could start waiting.
        const bankClosed = bank.waitForEvent('close', { timeout: STEP_TIMEOUT_MS });
        bankClosed.catch(() => undefined); // awaited below; no unhandled rejection if a step before fails
        await signInAtBank(bank, 'user_good', 'pass_good');
        await waitForState(page, 'success');
        // The proxy's return page closes the bank's tab by itself.
        await bankClosed;
        await page.locator('#pay-button:enabled').waitFor();
        assert.match(await elementStatus(page), /Checking ••••4321/);
        // The pay hint shows the bullets and is read with the spoken line instead. It is no live region: the
        // element's own announces the success, and two at once talk over each other. It describes Pay.
        const hint = page.locator('#pay-hint');
        assert.equal(await hint.getAttribute('aria-live'), null);
        assert.deepEqual(
          await page.evaluate(() =>
            [...document.querySelectorAll('[aria-live], [role="status"], [role="alert"], [role="log"]')].map(
              (node) => node.id,
            ),
          ),
          [],
          "no live region of the page's own",
        );
        assert.equal(await payButton(page).getAttribute('aria-describedby'), 'pay-hint');
        assert.match((await hint.innerText()).replace(/\s+/g, ' '), /Paying from Checking ••••4321/);
        assert.match(
          await hint.evaluate((node) =>
            [...node.childNodes]
              .filter((child) => !(child instanceof Element && child.getAttribute('aria-hidden') === 'true'))
              .map((child) => child.textContent)
              .join(''),
          ),
          /^Paying from Checking ending in 4321 at /,
        );

        // The side panel lists the events with the link reference masked.
        assert.deepEqual(
          (await loggedEvents(page)).filter((name) => name !== 'obv-state-change'),
          ['obv-start', 'obv-open', 'obv-success'],
        );
        const linkRef = await element(page).evaluate((el) => (el as HTMLElement & { value: string }).value);
        const detail =
          (await page.locator('#event-log > li[data-event="obv-success"] .event-detail').textContent()) ?? '';
        assert.ok(linkRef.length > 10, 'the element holds the link reference as its value');
        assert.ok(!detail.includes(linkRef), 'the full link reference is not displayed');
        assert.ok(
          detail.includes(`${linkRef.slice(0, 4)}••••${linkRef.slice(-4)}`),
          'the masked link reference is displayed',
        );
        // The panel is named, and no live region: a screen reader would read each event's JSON aloud.
        const panel = page.locator('#event-log');
        assert.deepEqual(
          [await panel.getAttribute('aria-live'), await panel.getAttribute('aria-labelledby')],
          [null, 'events-title'],
        );
        // Only the merchant's server can turn the reference into the account's token.
        const linked = await fetch(new URL(`obv/links/${encodeURIComponent(linkRef)}`, demo.url), {
          headers: { authorization: `Bearer ${MERCHANT_API_KEY}` },
        });
        assert.equal(linked.status, 200);
        const { accountToken } = (await linked.json()) as { accountToken: string };
        assert.ok(
          demo.provider.state.accounts.has(accountToken),
          'the reference resolves to the account the sandbox linked',
        );
        assert.notEqual(accountToken, linkRef);
        await saveScreenshot(page, 'checkout-linked');

        const orderId = await page.locator('input[name="orderId"]').inputValue();
        await pay(page);
        await expectApproved(page);
        assert.match((await page.locator('.receipt').textContent()) ?? '', /Checking ••••4321 · Sandbox Federal Bank/);
        // The result page shows the provider's own transaction: the merchant server redeemed the reference
        // the element linked, and the proxy charged that account's token, for this order.
        const transactionId = (await page.locator('#transaction-id').textContent()) ?? '';
        const charged = demo.provider.state.transactions.get(transactionId);
        assert.ok(charged, `the provider recorded transaction ${transactionId}`);
        assert.equal(charged.accountToken, accountToken);
        assert.equal(charged.merchantTransactionId, orderId);
        assert.deepEqual(problems, [], 'no console errors or CSP violations on the way');
        await saveScreenshot(page, 'payment-approved');

        // A paid order is closed: the shop starts the next one.
        const paidOrder = (await page.locator('.receipt .mono').first().textContent()) ?? '';
        await page.getByRole('link', { name: 'Continue shopping' }).click();
        await waitForState(page, 'idle');
        assert.notEqual(await page.locator('input[name="orderId"]').inputValue(), paidOrder);
        assert.equal(await payButton(page).isDisabled(), true);
      });
    },
  );

  it(
    'shows why user_bad could not be linked, and "Link another account" links user_good and pays',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      await withShopper(browser, demo, 'failure-then-try-again', async ({ page }) => {
        const bank = await startLinking(page);
        await signInAtBank(bank, 'user_bad', 'anything');
        await waitForState(page, 'failure');
        assert.match(await elementStatus(page), /Your bank couldn’t verify this account\./);
        assert.equal(await payButton(page).isDisabled(), true);
        assert.ok((await loggedEvents(page)).includes('obv-failure'));

        // The same account would fail again: the button offers another one.
        const bankAgain = await openBankTab(page, element(page).getByRole('button', { name: 'Link another account' }));
        await signInAtBank(bankAgain, 'user_good', 'pass_good');
        await waitForState(page, 'success');
        await pay(page);
        await expectApproved(page);
      });
    },
  );

  it(
    "takes a cancel at the bank back to the first screen, as the checkout's Cancel does, and keeps Pay disabled",
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      await withShopper(browser, demo, 'cancel-at-bank', async ({ page }) => {
        const bank = await startLinking(page);
        await cancelAtBank(bank);
        // The page still hears how the bank step ended.
        await page.locator('#event-log > li[data-event="obv-failure"]').waitFor();
        await waitForState(page, 'idle');
        // Said as neutrally as a cancel at the checkout: the first screen again, no failure title, no error in red.
        assert.match(await elementStatus(page), /Bank linking cancelled\./);
        assert.equal(await element(page).locator('[part~="error"]').count(), 0);
        assert.equal(await element(page).getByRole('button', { name: 'Link your bank account' }).count(), 1);
        assert.equal(await payButton(page).isDisabled(), true);
        const failure =
          (await page.locator('#event-log > li[data-event="obv-failure"] .event-detail').textContent()) ?? '';
        assert.match(failure, /CONSUMER_CANCELLED/);
      });
    },
  );
});
