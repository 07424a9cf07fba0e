// The Python shop (examples/python-shop/) beside the standalone proxy, as a merchant runs them: this
// checkout packed, and the README's "Any backend" block run word for word in bash in a fresh folder (the
// tarball in place of the registry's obv-link, free ports in place of 4010, 3000 and 8000): it installs
// the package, copies the example, starts the sandbox and `npx obv-link-proxy` in the background and the
// shop in the foreground. In Chromium the shopper links with user_good; the shop learns link.succeeded from
// the proxy's signed event (the page has no way to tell it), pays server to server and shows APPROVED.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, saveScreenshot, signInAtBank, STEP_TIMEOUT_MS } from '../e2e/harness.ts';
import {
  cleanEnv,
  freePort,
  packThisCheckout,
  readmeBlock,
  runShellBlock,
  tempApp,
  type ShellBlock,
  type TempApp,
} from './temp-apps.ts';

const ANY_BACKEND = '### Any backend';
/** The block installs the package first (already installed: npm checks and links it again). */
const INSTALL_TIMEOUT_MS = 180_000;

/** Polls `url` until it answers 200 (bounded), failing with the block's output otherwise. */
async function waitForHttp(url: string, block: ShellBlock, timeoutMs = STEP_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (
      await fetch(url).then(
        (response) => response.ok,
        () => false,
      )
    )
      return;
    if (block.process.exitCode !== null || Date.now() > deadline)
      throw new Error(`${url} did not answer:\n${block.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the Python shop beside the packed proxy', () => {
  let packDir: string;
  let tarball: string;
  let app: TempApp;
  let browser: Browser;
  let block: ShellBlock | undefined;

  before(async () => {
    packDir = mkdtempSync(path.join(tmpdir(), 'obv-link-pack-'));
    tarball = await packThisCheckout(packDir);
    app = tempApp('python-shop', tarball);
    // Installed once before, so the block's own `npm install` of the same tarball has nothing to build (the
    // native SQLite module compiles itself when no prebuilt binary can be fetched: minutes on a busy machine).
    await app.install([]);
    browser = await launchChromium();
  });

  after(async () => {
    await block?.stop();
    await browser?.close();
    app?.remove();
    rmSync(packDir, { recursive: true, force: true });
  });

  test("the README's commands, run as written, link with user_good, learn link.succeeded from the signed event, pay and show APPROVED", async (t) => {
    const commands = readmeBlock(ANY_BACKEND, 'sh');
    assert.doesNotMatch(
      commands,
      /&&[^\n]*&\s*(#.*)?$/m,
      'no line sends an install or a copy to the background with the server',
    );
    const [sandboxPort, proxyPort, shopPort] = [await freePort(), await freePort(), await freePort()];
    block = runShellBlock(
      commands,
      [
        ['npm install obv-link\n', `npm install ${tarball} --prefer-offline --no-audit --no-fund --loglevel=error\n`],
        ['127.0.0.1:4010', `127.0.0.1:${sandboxPort}`],
        ['127.0.0.1:3000', `127.0.0.1:${proxyPort}`],
        ['PORT=3000 ', `PORT=${proxyPort} `],
        ['127.0.0.1:8000', `127.0.0.1:${shopPort}`],
        // The shop's default proxy (http://127.0.0.1:3000/obv) is on its free port here.
        ['python3 python-shop/shop.py', `OBV_PROXY_URL=http://127.0.0.1:${proxyPort}/obv python3 python-shop/shop.py`],
      ],
      {
        cwd: app.dir,
        // The ports the commands take from their environment: the sandbox's PROVIDER_PORT (4010), the shop's PORT
        // (8000), and the proxy's sandbox address (OBV_SANDBOX=true's default, http://127.0.0.1:4010).
        env: cleanEnv({
          PROVIDER_PORT: String(sandboxPort),
          PROVIDER_LOG_LEVEL: 'warn',
          PORT: String(shopPort),
          OBV_BASE_URL: `http://127.0.0.1:${sandboxPort}`,
        }),
      },
    );
    const shopUrl = `http://127.0.0.1:${shopPort}`;
    await waitForHttp(`http://127.0.0.1:${proxyPort}/obv/healthz`, block, INSTALL_TIMEOUT_MS);
    await waitForHttp(`${shopUrl}/assets/obv-link-account.js`, block);

    // The README's curl for a link session, as written, against that proxy (its key is the one the block set).
    const curl = runShellBlock(
      readmeBlock('from another terminal while the proxy above runs', 'sh'),
      [['127.0.0.1:3000', `127.0.0.1:${proxyPort}`]],
      { cwd: app.dir, env: cleanEnv() },
    );
    assert.equal(await curl.exited(), 0, curl.output());
    assert.match(curl.output(), /\{"linkToken":"lt_[^"]+","expiresAt":"[^"]+"\}/, curl.output());

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    t.after(() => context.close());
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    try {
      await page.goto(`${shopUrl}/`);
      const orderUrl = page.url();
      assert.match(orderUrl, /\/orders\/order-[0-9a-f]{16}$/);
      const [bank] = await Promise.all([
        context.waitForEvent('page'),
        page.locator('obv-link-account').getByRole('button', { name: 'Link your bank account' }).click(),
      ]);
      await signInAtBank(bank, 'user_good');
      await page.getByText('Bank confirmed: Sandbox Federal Bank Checking ••••4321').waitFor();
      // What the shop's server knows, and how: a verified event delivery, not a request from the page.
      const learned = (await (await fetch(`${orderUrl}/status`)).json()) as { status: string; events: string[] };
      assert.equal(learned.status, 'linked');
      assert.match(learned.events[0]!, /^evt_[A-Za-z0-9_-]{22} link\.succeeded$/);
      assert.match(block.output(), /"POST \/obv-events HTTP\/1\.1" 204/);
      await saveScreenshot(page, 'python-shop-linked').catch(() => undefined);
      for (const width of [375, 320]) {
        await page.setViewportSize({ width, height: 700 });
        await saveScreenshot(page, `python-shop-linked-${width}`).catch(() => undefined);
      }

      await page.getByRole('button', { name: 'Pay $49.99' }).click();
      await page.locator('#result').getByText('Payment APPROVED').waitFor();
      await page.getByText(/^Order order-[0-9a-f]{16}, \$49\.99, transaction \S+$/).waitFor();
      await saveScreenshot(page, 'python-shop-paid-320').catch(() => undefined);
      // The payment's own event follows, signed like the first (bounded wait).
      const deadline = Date.now() + STEP_TIMEOUT_MS;
      let events: string[] = [];
      while (!events.some((line) => line.endsWith(' payment.succeeded')) && Date.now() < deadline) {
        events = ((await (await fetch(`${orderUrl}/status`)).json()) as { events: string[] }).events;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(
        events.some((line) => line.endsWith(' payment.succeeded')),
        `events: ${events.join(', ')}`,
      );
      assert.deepEqual(problems, []);
      assert.doesNotMatch(block.output(), /refused an event/);
    } finally {
      await saveScreenshot(page, 'python-shop-final').catch(() => undefined);
    }
  });
});
