// The bank step in a window the checkout never hides, and the holding page's way back, in a real headful
// Chromium (Xvfb, no focus emulation): the checkout notices the bank window closing with no visibility
// change and no click (issue 30 item 10), and "Back to checkout" on "Connecting to your bank…" closes
// the tab while the provider is slow, leaving the checkout in front (item 11).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { RunningDemo } from '../../demo/start-demo.ts';
import { launchHeadfulChromium, type HeadfulChromium } from '../helpers/headful-chromium.ts';
import {
  STEP_TIMEOUT_MS,
  TEST_TIMEOUT_MS,
  clickThatMayClose,
  element,
  elementStatus,
  saveScreenshot,
  startTestDemo,
  waitForState,
} from './harness.ts';

describe(
  'a bank window the checkout never hides, and the way back from "Connecting to your bank…"',
  { timeout: TEST_TIMEOUT_MS * 3 },
  () => {
    let demo: RunningDemo;
    let chromium: HeadfulChromium;
    const opened: Page[] = [];

    before(async () => {
      [demo, chromium] = await Promise.all([startTestDemo(), launchHeadfulChromium()]);
      chromium.context.setDefaultTimeout(STEP_TIMEOUT_MS);
    });
    after(async () => {
      await chromium?.close();
      await demo?.close();
    });
    async function closeAll(): Promise<void> {
      for (const page of opened.splice(0))
        await Promise.race([page.close().catch(() => undefined), page.waitForTimeout(3_000).catch(() => undefined)]);
    }
    async function linkFrom(page: Page): Promise<Page> {
      const [tab] = await Promise.all([
        chromium.context.waitForEvent('page'),
        element(page).getByRole('button', { name: 'Link your bank account' }).click(),
      ]);
      opened.push(tab);
      return tab;
    }

    it('"Back to checkout" closes the holding tab while the provider is slow; the checkout is in front', async () => {
      // The demo's first start needs a token (so this test runs first), and the provider never answers it:
      // the start waits on "Connecting…".
      demo.provider.faults.tokenFailures = { count: 1, kind: 'timeout' };
      const page = await chromium.context.newPage();
      opened.push(page);
      try {
        await page.goto(demo.url);
        await waitForState(page, 'idle');
        const tab = await linkFrom(page);
        const back = tab.getByRole('button', { name: 'Back to checkout' });
        await back.waitFor();
        await saveScreenshot(tab, 'connecting-page');
        // The click closes the tab, sometimes before Playwright's click has finished waiting.
        await Promise.all([tab.waitForEvent('close'), clickThatMayClose(tab, back)]);
        await page.waitForFunction(() => document.visibilityState === 'visible');
        // The live region is rewritten when the page comes back to the front (to be announced again): wait for its words.
        await page
          .locator('obv-link-account [part~="status"]', { hasText: /Connecting to your bank/ })
          .waitFor({ timeout: 5_000 })
          .catch(() => undefined);
        assert.match(await elementStatus(page), /Connecting to your bank/);
      } finally {
        demo.provider.faults.tokenFailures = { count: 0, kind: '5xx' };
        await closeAll();
      }
    });
    it('says the bank window was closed though the checkout stayed visible all along', async () => {
      const page = await chromium.context.newPage();
      opened.push(page);
      try {
        await page.goto(demo.url);
        await waitForState(page, 'idle');
        const bank = await linkFrom(page);
        await bank.getByLabel('Username').waitFor();
        await waitForState(page, 'waiting');
        // Side by side: the checkout in front, the bank in its own window (here: the tab behind it).
        await page.bringToFront();
        await page.waitForFunction(() => document.visibilityState === 'visible');
        await page.evaluate(() => {
          const seen = ((window as unknown as { visibilityChanges: number }).visibilityChanges = 0);
          document.addEventListener(
            'visibilitychange',
            () => void ((window as unknown as { visibilityChanges: number }).visibilityChanges = seen + 1),
          );
        });
        // Past the check that follows the checkout coming to the front: only a look at the window notices now.
        await page.waitForTimeout(1_200);
        await bank.close();
        await element(page).getByRole('link', { name: 'Open your bank’s page' }).waitFor();
        assert.match(await elementStatus(page), /Your bank’s page was closed/);
        assert.equal(
          await page.evaluate(() => (window as unknown as { visibilityChanges: number }).visibilityChanges),
          0,
          'no visibility change told it',
        );
        await saveScreenshot(page, 'bank-window-closed');
      } finally {
        await closeAll();
      }
    });
  },
);
