// 8. The returning shopper: in Debian's Chromium on the demo checkout, a shopper with two saved accounts
// clicks the other one; timed from the click to the element showing it chosen and ready (its link
// reference from POST /saved-accounts/use, `obv-success`, the element's update done; the form value comes
// with the Pay click that confirms it). The radio shows as checked in the first frame after the click. Its
// baseline (issue 40 §2): the same click on a bare page (fixtures/bare-shopper-pages.ts: the same offer, the
// same POST /saved-accounts/use, one line written), in its own context of the same browser, its clicks
// interleaved one for one with the element's, the first of each pair alternating; the aims are the element's
// time over it (lib/over-bare.ts). Beside it, from the same run, the first-time bank flow's last step alone (shopper-latency.ts: the
// bank's redirect → the element showing the linked account), which a returning shopper skips entirely.
// In production mode's binding (OBV_BIND_BANK_STEP): the click's path does not depend on it, and the
// first-time flows beside it are then the ones production shoppers have (the sandbox-mode first-time
// figures are the shopper section's).
import type { Page } from 'playwright-core';
import { launchShopperBrowser } from '../lib/shopper-browser.ts';
import { startDemoChild } from '../lib/demo-child.ts';
import { ORDER_COOKIE, SHOPPER_COOKIE } from '../../demo/checkout/server/checkout-routes.ts';
import type { BenchOptions } from '../lib/options.ts';
import { formatDeltaMs, formatMs, type SectionResult } from '../lib/report.ts';
import { summarize } from '../lib/stats.ts';
import type { BenchStorage } from '../lib/storage.ts';
import { consentWords } from '../../proxy/words/consent.ts';
import { offerWords } from '../../proxy/words/offer.ts';
import { sampleOnce } from './shopper-latency.ts';
import { BARE_RETURNING_PATH } from '../fixtures/bare-shopper-pages.ts';
import { overBareRows } from '../lib/over-bare.ts';

const STEP_TIMEOUT_MS = 15_000;

type Host = HTMLElement & { account?: { accountLabel: string }; updateComplete: Promise<unknown> };

const LINK_BUTTON = 'Link your bank account';

/**
 * Links and pays twice with the consent box ticked (checking, then savings): a shopper with two saved
 * accounts. As test/e2e/returning-shopper.test.ts drives it: the first checkout is idle with the consent
 * box beside the bank button; once an account is saved the checkout opens on the saved list, which never
 * shows the consent box (it would read as the chosen account's), so "Use another account" comes first and
 * brings the bank button with its consent box back.
 */
async function saveTwoAccounts(page: Page, url: string): Promise<void> {
  const words = offerWords('en');
  const consent = consentWords('en');
  const host = page.locator('obv-link-account');
  for (const username of ['user_good', 'user_savings']) {
    await page.goto(url);
    if (username === 'user_good') await page.locator('obv-link-account[state="idle"]').waitFor();
    else {
      await page.locator('obv-link-account[state="saved"]').waitFor();
      await host.getByRole('button', { name: words.useAnother, exact: true }).click();
      await page.locator('obv-link-account[state="idle"]').waitFor();
    }
    await host.getByRole('checkbox', { name: consent.checkbox }).check();
    const [bank] = await Promise.all([
      page.context().waitForEvent('page'),
      host.getByRole('button', { name: LINK_BUTTON }).click(),
    ]);
    await bank.getByLabel('Username').fill(username);
    await bank.getByLabel('Password').fill('pass_good');
    await bank
      .getByRole('button', { name: 'Sign in', exact: true })
      .click()
      .catch((error: Error) => {
        // The return page may close the tab before the click's own wait ends.
        if (!bank.isClosed() && !/closed/i.test(error.message)) throw error;
      });
    await page.locator('obv-link-account[state="success"]').waitFor();
    await Promise.all([page.waitForURL(/\/orders\//), page.locator('#pay-button').click()]);
    await page.locator('#transaction-status', { hasText: 'APPROVED' }).waitFor();
  }
  // The next checkout offers both, the first one preselected.
  await page.goto(url);
  await page.locator('obv-link-account[state="saved"]').waitFor();
  const radios = await host.getByRole('radiogroup', { name: words.title }).getByRole('radio').count();
  if (radios !== 2) throw new Error(`expected two saved accounts on the checkout, found ${radios}`);
}

/** Clicks on one order's checkout before a new order (inside the link session's limit of choices). */
const RELOAD_EVERY = 25;

/** One click on the radio not chosen: milliseconds until the element shows it ready. */
async function clickOther(page: Page): Promise<number> {
  const before = await page.locator('obv-link-account').evaluate((el) => (el as Host).account?.accountLabel);
  await page.evaluate(() => {
    const el = document.querySelector('obv-link-account') as Host;
    const timing = window as unknown as { obvClickAt: number; obvReady: Promise<number> };
    document.addEventListener('click', () => (timing.obvClickAt = performance.now()), { capture: true, once: true });
    timing.obvReady = new Promise((resolve) => {
      // Ready: the element has rendered the choice and has its account (in its update). The radio itself
      // shows as chosen in the first frame after the click, long before.
      el.addEventListener('obv-success', () => void el.updateComplete.then(() => resolve(performance.now())), {
        once: true,
      });
    });
  });
  await page.locator('obv-link-account').getByRole('radio', { checked: false }).click();
  const [clickAt, readyAt, after] = await page.evaluate(async () => {
    const timing = window as unknown as { obvClickAt: number; obvReady: Promise<number> };
    const ready = await timing.obvReady;
    return [
      timing.obvClickAt,
      ready,
      (document.querySelector('obv-link-account') as Host).account?.accountLabel,
    ] as const;
  });
  if (!after || after === before) throw new Error('the element did not change to the chosen account');
  return readyAt - clickAt;
}

type BareWindow = Window & { obvValue?: string; obvReady?: Promise<number>; obvClickAt?: number };

/** The same click on the bare page (fixtures/bare-shopper-pages.ts): until its line and link reference are written. */
async function clickOtherBare(page: Page): Promise<number> {
  const before = await page.evaluate(() => (window as BareWindow).obvValue);
  await page.evaluate(() => {
    const timing = window as BareWindow;
    document.addEventListener('click', () => (timing.obvClickAt = performance.now()), { capture: true, once: true });
  });
  await page.getByRole('radio', { checked: false }).click();
  const [clickAt, readyAt, after] = await page.evaluate(async () => {
    const timing = window as BareWindow;
    const ready = await timing.obvReady;
    return [timing.obvClickAt, ready, timing.obvValue] as const;
  });
  if (!after || after === before || clickAt === undefined || readyAt === undefined)
    throw new Error('the bare page did not change to the chosen account');
  return readyAt - clickAt;
}

/** Opens (or, after a new order, reloads) the bare page, until it has used the first saved account. */
async function openBare(page: Page, url: string): Promise<void> {
  if (page.url() === url) await page.reload();
  else await page.goto(url);
  await page.waitForFunction(() => (window as BareWindow).obvValue);
  const radios = await page.getByRole('radio').count();
  if (radios !== 2) throw new Error(`expected two saved accounts on the bare page, found ${radios}`);
}

export async function measureReturningShopper({ sizes }: BenchOptions, storage: BenchStorage): Promise<SectionResult> {
  // No rate limit: hundreds of choices a minute from one address. The storage options are spread loosely
  // (lib/storage.ts): a proxy without `storage` drops that key.
  const demo = await startDemoChild({
    ...storage.proxyOptions,
    bindBankStep: true,
  });
  const { browser, priorities } = await launchShopperBrowser();
  const saved: number[] = [];
  /** The bare page's clicks (fixtures/bare-shopper-pages.ts), interleaved with the element's. */
  const bareClicks: number[] = [];
  const bank: number[] = [];
  try {
    const context = await browser.newContext();
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    const page = await context.newPage();
    await saveTwoAccounts(page, demo.url);
    await page.waitForFunction(() => (document.querySelector('obv-link-account') as Host | null)?.account);
    // The bare page in a context of its own: an order, and so a link session and its choices, of its own;
    // the same shopper (the shop's cookie), so the same two saved accounts.
    const bareContext = await browser.newContext();
    await bareContext.addCookies((await context.cookies()).filter((cookie) => cookie.name === SHOPPER_COOKIE));
    bareContext.setDefaultTimeout(STEP_TIMEOUT_MS);
    const barePage = await bareContext.newPage();
    const bareUrl = new URL(BARE_RETURNING_PATH, demo.url).href;
    await openBare(barePage, bareUrl);
    const deadline = Date.now() + sizes.loopTimeoutMs;
    const warmup = Math.min(5, sizes.returningSamples);
    // At least one timed pair past the warm-up, even when the deadline has passed: the rows need a figure of each.
    for (
      let index = 0;
      index < sizes.returningSamples + warmup && (index <= warmup || Date.now() < deadline);
      index++
    ) {
      // A link session allows MAX_USES_PER_LINK_SESSION choices: well before, the shopper starts a new order
      // (the shop makes a new link session for it, with the same saved accounts), untimed.
      if (index > 0 && index % RELOAD_EVERY === 0) {
        await context.clearCookies({ name: ORDER_COOKIE });
        await page.reload();
        await page.waitForFunction(() => (document.querySelector('obv-link-account') as Host | null)?.account);
        await bareContext.clearCookies({ name: ORDER_COOKIE });
        await openBare(barePage, bareUrl);
      }
      // One click on each, the first one alternating: a load that comes and goes lands on both alike.
      const bareFirst = index % 2 === 1;
      const bareMs = bareFirst ? await clickOtherBare(barePage) : undefined;
      const ms = await clickOther(page);
      const bareClick = bareMs ?? (await clickOtherBare(barePage));
      if (index >= warmup) {
        saved.push(ms);
        bareClicks.push(bareClick);
      }
    }
    await bareContext.close();
    await context.close();
    // At least one, even when the clicks took the time (a loaded machine): the row's baseline needs it.
    for (let index = 0; index < sizes.returningBankSamples && (index === 0 || Date.now() < deadline); index++) {
      bank.push((await sampleOnce(browser, demo, demo)).redirectToShownMs);
    }
  } finally {
    await browser.close();
    await demo.close();
  }
  const chosen = summarize(saved);
  const bareChosen = summarize(bareClicks);
  const firstTime = summarize(bank);
  const rows = [
    ...overBareRows('returning shopper, click on a saved account → chosen, ready,', chosen, bareChosen),
    {
      metric: 'returning shopper p50 / p99 beside the first-time bank flow (Chromium)',
      value: `${formatMs(chosen.p50)} / ${formatMs(chosen.p99)}`,
      baseline: `${formatMs(firstTime.p50)} / ${formatMs(firstTime.p99)} first-time: bank redirect → account shown`,
      comparison: `${formatDeltaMs(chosen.p50 - firstTime.p50)} / ${formatDeltaMs(chosen.p99 - firstTime.p99)}`,
      aim: '',
    },
  ];
  return {
    section: 'returning',
    rows,
    data: {
      store: storage.name === 'sqlite' ? "the proxy's own (storage: sqlite)" : storage.name,
      chromiumPriorities: priorities,
      samples: saved.length,
      bankSamples: bank.length,
      savedAccountChosen: chosen,
      barePageChosen: bareChosen,
      firstTimeRedirectToShown: firstTime,
    },
  };
}
