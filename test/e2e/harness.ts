// Shared steps of the end-to-end tests: a demo on port 0, Debian's Chromium through playwright-core,
// and the consumer's moves (link, sign in at the sandbox bank, cancel), each with a bounded wait.
import { mkdir } from 'node:fs/promises';
import { after, before } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../../scripts/chromium.ts';
import { startDemo, type DemoOptions, type RunningDemo } from '../../demo/start-demo.ts';
import type { ObvState } from '../../widget/events.ts';

export const SCREENSHOT_DIR = 'test-results/e2e';

/** Upper bound of any single wait; generous for a loaded CI machine, short enough to fail fast. */
export const STEP_TIMEOUT_MS = 15_000;

/** Per-test limit for node:test. */
export const TEST_TIMEOUT_MS = 60_000;

/** Polls `check` (every 25 ms, at most `timeoutMs`) until it is true: for things the page does not show. */
export async function eventually(check: () => boolean, timeoutMs = STEP_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() >= deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A demo on a free loopback port; overrides shorten lifetimes for the tests that need it. */
export function startTestDemo(overrides: Omit<DemoOptions, 'port' | 'host'> = {}): Promise<RunningDemo> {
  return startDemo({ port: 0, host: '127.0.0.1', ...overrides });
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
}

/** A suite's demo and Chromium: started before its tests, closed after them; read them inside the tests. */
export interface DemoInChromium {
  demo: RunningDemo;
  browser: Browser;
}

/** Starts a demo (with `overrides`) and Chromium before the calling suite's tests and closes both after. */
export function demoInChromium(overrides: Omit<DemoOptions, 'port' | 'host'> = {}): DemoInChromium {
  const suite = {} as DemoInChromium;
  before(async () => {
    [suite.demo, suite.browser] = await Promise.all([startTestDemo(overrides), launchChromium()]);
  });
  after(async () => {
    await suite.browser?.close();
    await suite.demo?.close();
  });
  return suite;
}

/** A shopper's browser tab on the checkout, with the page's errors collected for assertions. */
export interface Shopper {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught exceptions of the checkout page (CSP violations show up here). */
  problems: string[];
  close(): Promise<void>;
}

export interface OpenCheckoutOptions {
  /** Runs in every page of the context before the page's own scripts. */
  initScript?: () => void;
  /** Runs before the checkout loads, e.g. to route the page's WebSocket. */
  beforeLoad?: (page: Page) => Promise<void>;
}

/**
 * Opens a checkout, runs `steps`, and saves a screenshot of the final state as `<name>.png` whether
 * the steps passed or not (a failing run's picture is the one worth having).
 */
export async function withShopper(
  browser: Browser,
  demo: RunningDemo,
  name: string,
  steps: (shopper: Shopper) => Promise<void>,
  options: OpenCheckoutOptions = {},
): Promise<void> {
  const shopper = await openCheckout(browser, demo, options);
  try {
    await steps(shopper);
  } finally {
    await saveScreenshot(shopper.page, name).catch(() => undefined);
    await shopper.close();
  }
}

/**
 * The source of a function to run in the page. tsx compiles with esbuild's keepNames, which wraps every
 * nested function in a `__name(fn, "name")` call the page does not define: a local no-op stands in for it.
 */
export function initScriptSource(script: () => void): string {
  return `(() => { const __name = (target) => target; (${script.toString()})(); })();`;
}

export async function openCheckout(
  browser: Browser,
  demo: RunningDemo,
  options: OpenCheckoutOptions = {},
): Promise<Shopper> {
  // Wide enough for the side-by-side layout with the events panel, as in the demo screenshot (CONTRIBUTING.md "Demo").
  const context = await browser.newContext({ viewport: { width: 1440, height: 960 }, deviceScaleFactor: 1 });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  if (options.initScript) await context.addInitScript({ content: initScriptSource(options.initScript) });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await options.beforeLoad?.(page);
  await page.goto(demo.url);
  await waitForState(page, 'idle');
  return { context, page, problems, close: () => context.close() };
}

export function element(page: Page): Locator {
  return page.locator('obv-link-account');
}

/** Waits until the element reflects `state` (e.g. `success` after the bank's outcome arrived). */
export async function waitForState(page: Page, state: ObvState): Promise<void> {
  await page.locator(`obv-link-account[state="${state}"]`).waitFor({ timeout: STEP_TIMEOUT_MS });
}

/** What the element tells the consumer (its status region, inside the shadow root). */
export function elementStatus(page: Page): Promise<string> {
  return element(page).locator('[part~="status"]').innerText();
}

export function payButton(page: Page): Locator {
  return page.getByRole('button', { name: /^Pay \$/ });
}

/** Clicks `trigger` in the checkout and returns the bank's tab it opens, once the sign-in page shows. */
export async function openBankTab(page: Page, trigger: Locator): Promise<Page> {
  const [bank] = await Promise.all([
    page.context().waitForEvent('page', { timeout: STEP_TIMEOUT_MS }),
    trigger.click(),
  ]);
  await bank.getByLabel('Username').waitFor({ timeout: STEP_TIMEOUT_MS });
  return bank;
}

/** Starts linking with the element's main button and returns the bank's tab. */
export function startLinking(page: Page): Promise<Page> {
  return openBankTab(page, element(page).getByRole('button', { name: 'Link your bank account' }));
}

/**
 * Clicks `target` on `page` when the click may close the page (the return page closing itself, "Back to
 * checkout"): a page that closes during the click can end Playwright's own wait with "Target page …
 * has been closed". That is the outcome, not an error; tests assert the closing itself where it matters.
 */
export async function clickThatMayClose(page: Page, target: Locator): Promise<void> {
  await target.click().catch((error: Error) => {
    if (!page.isClosed() && !/closed/i.test(error.message)) throw error;
  });
}

/** Submits the bank's form with `button`; the return page may close the tab at once (see clickThatMayClose). */
async function submitAtBank(bank: Page, button: 'Sign in' | 'Cancel'): Promise<void> {
  await clickThatMayClose(bank, bank.getByRole('button', { name: button, exact: true }));
}

export async function signInAtBank(bank: Page, username: string, password = 'pass_good'): Promise<void> {
  await bank.getByLabel('Username').fill(username);
  await bank.getByLabel('Password').fill(password);
  await submitAtBank(bank, 'Sign in');
}

export async function cancelAtBank(bank: Page): Promise<void> {
  await submitAtBank(bank, 'Cancel');
}

/**
 * Saves the page as `test-results/e2e/<name>.png` (CI keeps the folder). CSS transitions are finished
 * first: without that, a Pay button enabled a moment ago is caught mid-fade and looks disabled.
 */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOT_DIR}/${name}.png`, fullPage: true, animations: 'disabled' });
}

/** Names of the events the checkout's side panel listed, oldest first. */
export function loggedEvents(page: Page): Promise<string[]> {
  return page
    .locator('#event-log > li')
    .evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.event ?? ''));
}

/** Clicks Pay and waits for the result page. */
export async function pay(page: Page): Promise<void> {
  await Promise.all([page.waitForURL(/\/orders\//, { timeout: STEP_TIMEOUT_MS }), payButton(page).click()]);
}
