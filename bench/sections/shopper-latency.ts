// 7. What the shopper feels: in Debian's Chromium (playwright-core), the demo checkout, the element's
// Link button, the sandbox bank's sign-in; from the bank's redirect (the 303 that ends the bank step, as
// the sandbox writes it: the element closes the bank tab once the outcome is in, sometimes before the tab
// has read the 303) to the element showing the linked account. Beside it, from the same samples, the notification →
// socket relay time: the provider's notification leaving the sandbox to the `result` arriving on the
// page's WebSocket. The two clocks are the machine's wall clock read by Node and by Chromium
// (`performance.timeOrigin + performance.now()` on both sides). The demo runs in its own process
// (children/demo-server.ts), so the bench's playwright client does not share the proxy's event loop.
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../../scripts/chromium.ts';
import { startDemoChild, type NotificationClock } from '../lib/demo-child.ts';
import type { BenchOptions } from '../lib/options.ts';
import { openStorage } from '../lib/storage.ts';
import { formatDeltaMs, formatMs, type SectionResult } from '../lib/report.ts';
import { summarize } from '../lib/stats.ts';

const STEP_TIMEOUT_MS = 15_000;

interface Sample {
  redirectToShownMs: number;
  notificationToSocketMs: number;
}

/** In every page: note when a `result` message arrives on any WebSocket (the element's socket). */
function recordSocketResults(): void {
  const NativeSocket = window.WebSocket;
  const times: number[] = [];
  (window as unknown as { obvResultTimes: number[] }).obvResultTimes = times;
  window.WebSocket = class extends NativeSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      this.addEventListener('message', (event: MessageEvent) => {
        if (typeof event.data === 'string' && event.data.includes('"type":"result"')) times.push(performance.timeOrigin + performance.now());
      });
    }
  };
}

export async function sampleOnce(browser: Browser, demo: { url: string }, notifications: NotificationClock): Promise<Sample> {
  const context = await browser.newContext();
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  await context.addInitScript(recordSocketResults);
  try {
    const page = await context.newPage();
    await page.goto(demo.url);
    await page.locator('obv-link-account[state="idle"]').waitFor();
    await page.evaluate(() => {
      const el = document.querySelector('obv-link-account') as HTMLElement & { updateComplete: Promise<unknown> };
      // "Shown": the element has rendered the account and the next frame is being produced.
      (window as unknown as { obvShown: Promise<number> }).obvShown = new Promise((resolve) => {
        el.addEventListener('obv-success', () => {
          void el.updateComplete.then(() => requestAnimationFrame(() => resolve(performance.timeOrigin + performance.now())));
        }, { once: true });
      });
    });
    const [bank] = await Promise.all([
      context.waitForEvent('page'),
      page.locator('obv-link-account').getByRole('button', { name: 'Link your bank account' }).click(),
    ]);
    await bank.getByLabel('Username').fill('user_good');
    await bank.getByLabel('Password').fill('pass_good');
    await notifications.reset();
    await bank.getByRole('button', { name: 'Sign in', exact: true }).click().catch((error: Error) => {
      // The return page may close the tab before the click's own wait ends.
      if (!bank.isClosed() && !/closed/i.test(error.message)) throw error;
    });
    const shownAt = await page.evaluate(() => (window as unknown as { obvShown: Promise<number> }).obvShown);
    const resultAt = await resultTime(page);
    const sentAt = await notifications.firstSentAt();
    if (sentAt === undefined) throw new Error('no notification was sent');
    const redirectAt = await notifications.firstRedirectAt();
    if (redirectAt === undefined) throw new Error('the bank did not redirect');
    return { redirectToShownMs: shownAt - redirectAt, notificationToSocketMs: resultAt - sentAt };
  } finally {
    await context.close();
  }
}

async function resultTime(page: Page): Promise<number> {
  const times = await page.evaluate(() => (window as unknown as { obvResultTimes: number[] }).obvResultTimes);
  if (times[0] === undefined) throw new Error('the outcome did not arrive on the socket');
  return times[0];
}

export async function measureShopperLatency({ sizes }: BenchOptions): Promise<SectionResult> {
  // The demo in its own process (children/demo-server.ts) on its default storage, SQLite.
  const storage = await openStorage('sqlite');
  const demo = await startDemoChild(storage.proxyOptions);
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
  const samples: Sample[] = [];
  try {
    const deadline = Date.now() + sizes.loopTimeoutMs;
    const total = sizes.shopperWarmup + sizes.shopperSamples;
    for (let index = 0; index < total && Date.now() < deadline; index++) {
      const sample = await sampleOnce(browser, demo, demo);
      if (index >= sizes.shopperWarmup) samples.push(sample);
    }
  } finally {
    await browser.close();
    await demo.close();
    await storage.close();
  }
  const shown = summarize(samples.map((sample) => sample.redirectToShownMs));
  const relay = summarize(samples.map((sample) => sample.notificationToSocketMs));
  const row = (which: 'p50' | 'p99') => ({
    metric: `shopper ${which}, bank redirect → element shows outcome (Chromium)`,
    value: formatMs(shown[which]),
    baseline: `${formatMs(relay[which])} notification → socket`,
    comparison: formatDeltaMs(shown[which] - relay[which]),
    aim: '',
  });
  return {
    section: 'shopper',
    rows: [row('p50'), row('p99')],
    data: { samples: samples.length, redirectToShown: shown, notificationToSocket: relay },
  };
}
