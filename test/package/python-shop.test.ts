// The Python shop (examples/python-shop/) beside the standalone proxy, as a merchant runs them: this
// checkout packed, the tarball installed in a fresh folder, the sandbox and `obv-link-proxy` started from
// it with the README's "Any backend" variables, and `python3 shop.py` in that folder. In Chromium the
// shopper links with user_good; the shop learns link.succeeded from the proxy's signed event (the page
// has no way to tell it), pays server to server and shows APPROVED.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, saveScreenshot, signInAtBank, STEP_TIMEOUT_MS } from '../e2e/harness.ts';
import { startPythonShop, type RunningPythonShop } from '../helpers/python-shop.ts';
import { cleanEnv, freePort, packThisCheckout, readmeBlock, startChild, tempApp, type Child, type TempApp } from './temp-apps.ts';

const ANY_BACKEND = '### Any backend';

/** `NAME=value` pairs of the README line that runs `command`. */
function readmeVariables(command: string): Record<string, string> {
  const line = readmeBlock(ANY_BACKEND, 'sh').split('\n').find((candidate) => candidate.includes(command) && candidate.includes('='));
  assert.ok(line, `the README's "Any backend" block runs ${command}`);
  return Object.fromEntries([...line.matchAll(/(\w+)=(\S+)/g)].map(([, name, value]) => [name!, value!]));
}

/** Polls `url` until it answers 200 (bounded), failing with the server's output otherwise. */
async function waitForHttp(url: string, server: Child): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    if (await fetch(url).then((response) => response.ok, () => false)) return;
    if (server.process.exitCode !== null || Date.now() > deadline) throw new Error(`${url} did not answer:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the Python shop beside the packed proxy', () => {
  let packDir: string;
  let app: TempApp;
  let browser: Browser;
  const children: Child[] = [];
  let shop: RunningPythonShop | undefined;

  before(async () => {
    packDir = mkdtempSync(path.join(tmpdir(), 'obv-link-pack-'));
    app = tempApp('python-shop', await packThisCheckout(packDir));
    await app.install([]);
    browser = await launchChromium();
  });

  after(async () => {
    await shop?.close();
    for (const child of children) child.kill();
    await browser?.close();
    app?.remove();
    rmSync(packDir, { recursive: true, force: true });
  });

  test('links with user_good, learns link.succeeded from the signed event, pays and shows APPROVED', async (t) => {
    const sandbox = startChild(path.join(app.dir, 'node_modules/.bin/obv-link-sandbox'), [],
      { cwd: app.dir, env: cleanEnv({ PROVIDER_PORT: '0', PROVIDER_LOG_LEVEL: 'warn' }) });
    children.push(sandbox);
    const [, sandboxUrl] = await sandbox.waitFor(/listening on (http:\/\/\S+)/);

    // The README's variables, on free ports instead of 3000 and 8000.
    const [proxyPort, shopPort] = [await freePort(), await freePort()];
    const ports = (value: string) => value.replace('http://127.0.0.1:4010', sandboxUrl!)
      .replaceAll('127.0.0.1:3000', `127.0.0.1:${proxyPort}`).replaceAll('127.0.0.1:8000', `127.0.0.1:${shopPort}`).replace(/^3000$/, String(proxyPort));
    const proxyEnv = Object.fromEntries(Object.entries(readmeVariables('npx obv-link-proxy')).map(([name, value]) => [name, ports(value)]));
    const shopEnv = Object.fromEntries(Object.entries(readmeVariables('python-shop/shop.py')).map(([name, value]) => [name, ports(value)]));
    const proxy = startChild(path.join(app.dir, 'node_modules/.bin/obv-link-proxy'), [],
      { cwd: app.dir, env: cleanEnv({ ...proxyEnv, HOST: '127.0.0.1', OBV_LOG_LEVEL: 'warn' }) });
    children.push(proxy);
    await waitForHttp(`http://127.0.0.1:${proxyPort}/obv/healthz`, proxy);
    // As the README says: the example copied out of the installed package, run from the app's folder (the
    // shop serves the element from its node_modules).
    cpSync(path.join(app.dir, 'node_modules/obv-link/examples/python-shop'), path.join(app.dir, 'python-shop'), { recursive: true });
    shop = await startPythonShop({
      OBV_PROXY_URL: shopEnv.OBV_PROXY_URL!,
      OBV_MERCHANT_API_KEY: shopEnv.OBV_MERCHANT_API_KEY!,
      OBV_EVENTS_SECRET: shopEnv.OBV_EVENTS_SECRET!,
      PORT: String(shopPort),
    }, { cwd: app.dir, script: 'python-shop/shop.py' });

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    t.after(() => context.close());
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    try {
      await page.goto(`${shop.url}/`);
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
      assert.match(shop.child.output(), /"POST \/obv-events HTTP\/1\.1" 204/);
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
      assert.ok(events.some((line) => line.endsWith(' payment.succeeded')), `events: ${events.join(', ')}`);
      assert.deepEqual(problems, []);
      assert.doesNotMatch(shop.child.output(), /refused an event/);
    } finally {
      await saveScreenshot(page, 'python-shop-final').catch(() => undefined);
    }
  });
});
