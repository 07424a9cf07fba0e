// The ways a real consumer's browser gets in the way, end to end in Chromium: a blocked pop-up, a
// reload of the checkout while the bank tab is open, a WebSocket that cannot connect, and a consumer
// slower than the session's lifetime.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { RunningDemo } from '../../demo/start-demo.ts';
import {
  STEP_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  element,
  elementStatus,
  eventually,
  launchChromium,
  loggedEvents,
  openBankTab,
  pay,
  signInAtBank,
  startLinking,
  startTestDemo,
  waitForState,
  withShopper,
} from './harness.ts';

/** Short enough that the expiry test waits seconds, long enough for a slow CI machine to start a session. */
const SHORT_SESSION_TTL_MS = 4_000;

describe('demo checkout when the browser gets in the way', { timeout: TEST_TIMEOUT_MS * 5 }, () => {
  let demo: RunningDemo;
  let shortLivedDemo: RunningDemo;
  let browser: Browser;

  before(async () => {
    [demo, shortLivedDemo, browser] = await Promise.all([
      startTestDemo(),
      startTestDemo({ sessionTtlMs: SHORT_SESSION_TTL_MS }),
      launchChromium(),
    ]);
  });

  after(async () => {
    await browser?.close();
    await Promise.all([demo?.close(), shortLivedDemo?.close()]);
  });

  it(
    'offers a link to the bank when the pop-up is blocked, and the link completes the flow',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const blockPopups = () => {
        window.open = () => null;
      };
      await withShopper(
        browser,
        demo,
        'popup-blocked-fallback-link',
        async ({ page }) => {
          await element(page).getByRole('button', { name: 'Link your bank account' }).click();
          await waitForState(page, 'waiting');
          assert.match(await elementStatus(page), /Your browser blocked your bank’s page/);
          const popupError =
            (await page.locator('#event-log > li[data-event="obv-error"] .event-detail').textContent()) ?? '';
          assert.match(popupError, /popup-blocked/);

          const bank = await openBankTab(page, element(page).getByRole('link', { name: /Open your bank/ }));
          await signInAtBank(bank, 'user_good', 'pass_good');
          await waitForState(page, 'success');
          await pay(page);
          assert.equal(await page.locator('#transaction-status').textContent(), 'APPROVED');
        },
        { initScript: blockPopups },
      );
    },
  );

  it(
    'gets the outcome after the checkout is reloaded while the consumer is at the bank',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      await withShopper(browser, demo, 'reload-while-waiting', async ({ page }) => {
        const bank = await startLinking(page);
        const orderId = await page.locator('input[name="orderId"]').inputValue();
        await page.reload();
        assert.equal(await page.locator('input[name="orderId"]').inputValue(), orderId, 'the reload keeps the order');
        // The element picks the session up again from the tab's storage.
        await waitForState(page, 'waiting');
        await signInAtBank(bank, 'user_good', 'pass_good');
        await waitForState(page, 'success');
        assert.ok((await loggedEvents(page)).includes('obv-success'), 'the reloaded page saw obv-success');
        await page.locator('#pay-button:enabled').waitFor();
      });
    },
  );

  it(
    'falls back to polling when the WebSocket cannot connect, and still gets the outcome',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      let socketAttempts = 0;
      await withShopper(
        browser,
        demo,
        'websocket-blocked-polling',
        async ({ page }) => {
          const bank = await startLinking(page);
          // Polling is running before the consumer finishes (so the outcome is not a lucky reconnect).
          await page.waitForRequest(
            (request) => request.method() === 'POST' && /\/obv\/sessions\/lookup$/.test(request.url()),
            {
              timeout: STEP_TIMEOUT_MS,
            },
          );
          // The proxy's return page would also tell the checkout (BroadcastChannel) to look once; take that
          // path away so that only the polling can deliver the outcome.
          await page
            .context()
            .route(/\/obv\/return\//, (route) =>
              route.fulfill({ status: 200, contentType: 'text/html', body: '<p>Back at the shop</p>' }),
            );
          const polledOutcome = page.waitForResponse(
            async (response) =>
              /\/obv\/sessions\/lookup$/.test(response.url()) &&
              ((await response.json().catch(() => undefined)) as { state?: string } | undefined)?.state === 'succeeded',
            { timeout: STEP_TIMEOUT_MS },
          );
          polledOutcome.catch(() => undefined); // awaited below; no unhandled rejection if the sign-in fails
          await signInAtBank(bank, 'user_good', 'pass_good');
          // What polling hands the browser is the reference and display fields, never the account's token.
          const { outcome } = (await (await polledOutcome).json()) as { outcome: Record<string, unknown> };
          assert.equal(typeof outcome.linkRef, 'string');
          assert.equal('accountToken' in outcome, false);
          await waitForState(page, 'success');
          assert.ok(socketAttempts >= 1, 'the element did try the WebSocket first');
          await page.locator('#pay-button:enabled').waitFor();
        },
        {
          beforeLoad: (page) =>
            // Like a proxy on the way that cuts WebSocket connections: every socket is dropped before it
            // reaches the proxy, so no subscription ever happens.
            page.routeWebSocket(/\/obv\/ws$/, (socket) => {
              socketAttempts += 1;
              socket.close({ code: 1006 });
            }),
        },
      );
    },
  );

  it(
    'tells a consumer slower than the session lifetime that the session expired',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      await withShopper(browser, shortLivedDemo, 'session-expired', async ({ page }) => {
        const bank = await startLinking(page);
        assert.ok(!bank.isClosed());
        const consumerUrl = bank.url();
        const bankClosed = bank.waitForEvent('close', { timeout: SHORT_SESSION_TTL_MS + STEP_TIMEOUT_MS });
        await page
          .locator('obv-link-account[state="expired"]')
          .waitFor({ timeout: SHORT_SESSION_TTL_MS + STEP_TIMEOUT_MS });
        // Expired, the session closes its bank tab.
        await bankClosed;
        assert.match(await elementStatus(page), /Your bank session timed out/);
        const expiredError =
          (await page.locator('#event-log > li[data-event="obv-error"] .event-detail').textContent()) ?? '';
        assert.match(expiredError, /"kind": "expired"/);
        assert.equal(await page.locator('#pay-button').isDisabled(), true);
        await element(page).getByRole('button', { name: 'Try again' }).waitFor();

        // The consumer finds the bank's page again (history) and signs in: the late outcome must not revive the session.
        const delivered = shortLivedDemo.provider.stats.notificationsDelivered;
        const again = await page.context().newPage();
        await again.goto(consumerUrl);
        await signInAtBank(again, 'user_good', 'pass_good');
        await eventually(() => shortLivedDemo.provider.stats.notificationsDelivered > delivered);
        await shortLivedDemo.provider.notificationsSettled();
        assert.equal(await element(page).getAttribute('state'), 'expired');
        assert.equal(await page.locator('#pay-button').isDisabled(), true);
        assert.equal((await loggedEvents(page)).includes('obv-success'), false);
      });
    },
  );
});
