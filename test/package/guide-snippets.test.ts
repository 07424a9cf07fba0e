// The guides' runnable Node snippets, from the packed tarball in a fresh Express app, as written:
// - docs/RETURNING-SHOPPERS.md: its server.js and db.js (the stand-in for the merchant's database), run with
//   the variables of its command, in Chromium: a first purchase saves the account, the next pays in one click
//   with no bank tab, a stale account leads to "Reconnect", the bank step and a payment, and a removal (asked
//   in the element) reaches the merchant's hook. Every call is in process: no API key is set, so a call to the proxy's own HTTP API
//   could not succeed.
// - docs/EVENTS.md: its events.js fed by `npx obv-link-proxy send-test-event` (the guide's commands run word
//   for word in bash): every event type arrives signed and is handled; a forged or unsigned delivery is refused.
// The sandbox for the returning shopper runs in this process (its `markAccountStale` control makes the
// account stale); everything of the merchant's runs from the tarball.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { startProvider, type RunningProvider } from '../../sandbox/index.ts';
import { consentWords } from '../../proxy/words/consent.ts';
import { offerWords } from '../../proxy/words/offer.ts';
import { EVENT_TYPES } from '../../proxy/storage/events.ts';
import {
  element,
  launchChromium,
  linkAtBank,
  saveScreenshot,
  STEP_TIMEOUT_MS,
  waitForState,
} from '../e2e/returning-shopper-steps.ts';
import {
  cleanEnv,
  freePort,
  packThisCheckout,
  pinned,
  readmeBlock,
  ROOT,
  runShellBlock,
  startChild,
  tempApp,
  type Child,
  type ShellBlock,
  type TempApp,
} from './temp-apps.ts';

const guide = (name: string) => readFileSync(path.join(ROOT, 'docs', name), 'utf8');

/** `NAME=value` pairs of the line of `block` that runs `command`. */
function lineVariables(block: string, command: string): Record<string, string> {
  const line = block.split('\n').find((candidate) => candidate.includes(command) && candidate.includes('='));
  assert.ok(line, `the block runs ${command}:\n${block}`);
  return Object.fromEntries([...line.matchAll(/(\w+)=(\S+)/g)].map(([, name, value]) => [name!, value!]));
}

/** Polls `url` until it answers 200 (bounded), failing with the process's output otherwise. */
async function waitForHttp(url: string, server: Child): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS * 2;
  for (;;) {
    if (
      await fetch(url).then(
        (response) => response.ok,
        () => false,
      )
    )
      return;
    if (server.process.exitCode !== null || Date.now() > deadline)
      throw new Error(`${url} did not answer:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let packDir: string;
let app: TempApp;
let browser: Browser;

before(async () => {
  packDir = mkdtempSync(path.join(tmpdir(), 'obv-link-pack-'));
  app = tempApp('guides', await packThisCheckout(packDir));
  await app.install([pinned('express')]);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  app?.remove();
  rmSync(packDir, { recursive: true, force: true });
});

describe("docs/RETURNING-SHOPPERS.md, run as written against a stand-in for the merchant's database", () => {
  let provider: RunningProvider;
  let server: Child | undefined;

  before(async () => {
    provider = await startProvider({ port: 0, notificationRetryDelaysMs: [100, 500, 2000] });
  });

  after(async () => {
    server?.kill();
    await provider?.close();
  });

  test('saves with consent, pays again in one click, reconnects a stale account, and removes it: all in process', async (t) => {
    const page_ = guide('RETURNING-SHOPPERS.md');
    const serverJs = readmeBlock('In Node, the proxy mounted in your app', 'js', page_);
    const dbJs = readmeBlock('What it asks of your database', 'js', page_);
    assert.match(dbJs, /export const db = \{/);
    assert.doesNotMatch(
      serverJs,
      /\bfetch\(|OBV_MERCHANT_API_KEY|\bauthorization:/i,
      'no HTTP call to itself, no API key',
    );
    app.write('server.js', serverJs);
    app.write('db.js', dbJs);

    const variables = lineVariables(readmeBlock('Try it against the sandbox', 'sh', page_), 'node server.js');
    assert.equal(variables.OBV_MERCHANT_API_KEY, undefined, 'the guide runs it without an API key');
    const port = await freePort();
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(variables)) {
      env[name] = value
        .replace('http://127.0.0.1:4010', provider.url)
        .replace('127.0.0.1:3000', `127.0.0.1:${port}`)
        .replace(/^3000$/, String(port));
    }
    server = startChild(process.execPath, ['server.js'], {
      cwd: app.dir,
      env: cleanEnv({ ...env, OBV_LOG_LEVEL: 'warn' }),
    });
    const shop = `http://127.0.0.1:${port}`;
    await waitForHttp(`${shop}/obv/healthz`, server);
    // No API key: the proxy's merchant routes are not even mounted, so only in-process calls can pay.
    assert.equal((await fetch(`${shop}/obv/transactions`, { method: 'POST' })).status, 404);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    t.after(() => context.close());
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    const host = element(page);
    const words = offerWords('en');
    const payAndRead = async () => {
      await Promise.all([page.waitForURL(/\/orders\//), page.getByRole('button', { name: 'Pay $49.99' }).click()]);
      return JSON.parse(await page.locator('body').innerText()) as {
        state: string;
        transactionStatus: string;
        accountLabel: string;
      };
    };

    // 1. The first purchase: the consent box, ticked; the bank step; the payment; the saved account kept by db.js.
    await page.goto(`${shop}/checkout`);
    await waitForState(page, 'idle');
    await host.getByRole('checkbox', { name: consentWords('en').checkbox }).check();
    await linkAtBank(page, host.getByRole('button', { name: 'Link your bank account' }), 'en');
    await waitForState(page, 'success');
    const first = await payAndRead();
    assert.deepEqual([first.state, first.transactionStatus], ['completed', 'APPROVED']);

    // 2. The next purchase: the saved account offered and chosen; Pay is the one click (no bank tab, no verification).
    await page.goto(`${shop}/checkout`);
    await waitForState(page, 'saved');
    assert.equal(await host.getByRole('radio', { name: /Sandbox Federal Bank/ }).isChecked(), true);
    const [verifications, tabs] = [provider.stats.verificationRequests, context.pages().length];
    const second = await payAndRead();
    assert.deepEqual([second.state, second.transactionStatus], ['completed', 'APPROVED']);
    assert.equal(provider.stats.verificationRequests, verifications, 'no upstream verification');
    assert.equal(context.pages().length, tabs, 'no bank tab');

    // 3. The bank wants the shopper again: Pay comes back to a checkout that says "Reconnect …"; the bank step; paid.
    const accountToken = [...provider.state.transactions.values()].at(-1)!.accountToken;
    assert.ok(provider.markAccountStale(accountToken));
    await page.goto(`${shop}/checkout`);
    await waitForState(page, 'saved');
    await Promise.all([page.waitForURL(`${shop}/checkout`), page.getByRole('button', { name: 'Pay $49.99' }).click()]);
    await waitForState(page, 'idle');
    await host
      .locator('.title')
      .filter({ hasText: `${words.reconnect} Sandbox Federal Bank Checking ••••4321` })
      .waitFor();
    await saveScreenshot(page, 'package-guide-returning-reconnect').catch(() => undefined);
    await linkAtBank(page, host.getByRole('button', { name: words.reconnect, exact: true }), 'en');
    assert.equal(
      [...provider.state.verifications.values()].at(-1)!.request.accountToken,
      accountToken,
      'the re-verification carries the saved token',
    );
    await waitForState(page, 'success');
    const third = await payAndRead();
    assert.deepEqual([third.state, third.transactionStatus], ['completed', 'APPROVED']);

    // 4. Removed in the element (confirmed in the account's row): onSavedAccountRemoved deletes it from db.js.
    await page.goto(`${shop}/checkout`);
    await waitForState(page, 'saved');
    await host.getByRole('button', { name: new RegExp(`^${words.remove} Sandbox Federal Bank`) }).click();
    const question = host.getByRole('group', {
      name: new RegExp(`${words.removeConfirm.split('{account}')[0]}Sandbox Federal Bank`),
    });
    await question.getByRole('button', { name: words.remove, exact: true }).click();
    await waitForState(page, 'idle');
    await page.goto(`${shop}/checkout`);
    await waitForState(page, 'idle');
    assert.equal(await host.getByRole('radio').count(), 0, "no longer offered: the merchant's hook deleted it");
    assert.deepEqual(problems, []);
    assert.doesNotMatch(server.output(), /"level":(50|60)/, server.output());
  });
});

describe('docs/EVENTS.md, run as written: the event handler fed by test events', () => {
  let block: ShellBlock | undefined;

  after(async () => {
    await block?.stop();
  });

  test('every event type arrives signed and is handled; a forged or unsigned delivery gets 400', async () => {
    const page = guide('EVENTS.md');
    const eventsJs = readmeBlock('`events.js`, a whole app', 'js', page);
    assert.match(eventsJs, /proxy\.verifyEvent\(/);
    app.write('events.js', eventsJs);
    const port = await freePort();
    block = runShellBlock(
      readmeBlock('Run it, and send it a signed sample', 'sh', page),
      [
        ['127.0.0.1:3000', `127.0.0.1:${port}`],
        ['PORT=3000 ', `PORT=${port} `],
        // No sandbox needed: nothing here asks the provider (its address, unreachable, is only configuration).
        ['127.0.0.1:4010', '127.0.0.1:9'],
      ],
      { cwd: app.dir, env: cleanEnv({ OBV_LOG_LEVEL: 'warn', OBV_STORAGE: 'memory' }) },
    );
    // bash ends when send-test-event does (the app, in the background, keeps running in its group).
    const deadline = Date.now() + STEP_TIMEOUT_MS * 4;
    while (block.process.exitCode === null && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(block.process.exitCode, 0, `send-test-event: every sample answered 2xx:\n${block.output()}`);
    for (const type of EVENT_TYPES) {
      assert.match(
        block.output(),
        new RegExp(`^${type.replace('.', '\\.')} evt_\\S+ → 204$`, 'm'),
        `${type} was answered 204`,
      );
      assert.match(
        block.output(),
        new RegExp(`^${type.replace('.', '\\.')} order-test-0001$`, 'm'),
        `events.js handled ${type}`,
      );
    }

    // A delivery whose body was changed after signing, and one without a signature: refused, not handled.
    const url = `http://127.0.0.1:${port}/obv-events`;
    const body = JSON.stringify({
      id: 'evt_forged',
      type: 'link.succeeded',
      createdAt: new Date().toISOString(),
      data: { merchantTransactionId: 'order-forged' },
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const forged = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'evt_forged',
        'webhook-timestamp': timestamp,
        'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
      },
      body,
    });
    assert.equal(forged.status, 400);
    const unsigned = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal(unsigned.status, 400);
    assert.doesNotMatch(block.output(), /order-forged/);
  });
});
