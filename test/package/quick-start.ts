// The two journeys the installed-package tests run on each supported Node (the one running the tests, and
// the lowest the package supports): the README's quick start, word for word, linked and paid in
// Chromium; and `npx obv-link-proxy`'s state in ./obv-link-data, still paid after a SIGKILL and a restart.
// Each starts the app's processes with the `node` binary it is given and returns them, so a caller can
// read what they wrote (e.g. that no experimental warning reached the merchant's terminal).
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { Browser } from 'playwright-core';
import { saveScreenshot, signInAtBank, STEP_TIMEOUT_MS } from '../e2e/harness.ts';
import { signInAtBank as signInOverHttp } from '../node/redis/cluster.ts';
import { eventually } from '../node/redis/support.ts';
import { lookupSession } from '../helpers/session-requests.ts';
import {
  bin,
  cleanEnv,
  freePort,
  listeningAddresses,
  readmeBlock,
  startChild,
  waitForHttp,
  type Child,
  type TempApp,
} from './temp-apps.ts';

const QUICK_START = '### Quick start against the sandbox';

/** The sandbox bin on a free port (as the README starts it on 4010), with `node`; resolves with its URL. */
export async function startSandbox(
  app: TempApp,
  node: string,
  children: Child[],
): Promise<{ sandbox: Child; url: string }> {
  const sandbox = startChild(node, [bin(app, 'obv-link-sandbox')], {
    cwd: app.dir,
    env: cleanEnv({ PROVIDER_PORT: '0', PROVIDER_LOG_LEVEL: 'warn' }),
  });
  children.push(sandbox);
  const [, url] = await sandbox.waitFor(/listening on (http:\/\/\S+)/);
  return { sandbox, url: url! };
}

export interface QuickStartRun {
  /** The README's server.js, stopped by SIGTERM once paid. */
  server: Child;
  /** Its variables, as the README sets them (ports changed to free ones). */
  env: Record<string, string>;
  orderId: string;
  linkRef: string;
  transactionId: string;
}

/**
 * The README's quick start in `app` with `node`: server.js and checkout.html as written, a shopper links
 * and pays in Chromium, a second payment of the order answers 409 with the first; then SIGTERM, exit 0.
 */
export async function quickStartLinksAndPays(
  t: TestContext,
  app: TempApp,
  browser: Browser,
  node: string,
  children: Child[],
): Promise<QuickStartRun> {
  const commands = readmeBlock(QUICK_START, 'sh');
  const envLine = commands.split('\n').find((line) => line.startsWith('OBV_SANDBOX='));
  assert.ok(envLine, 'the quick start runs server.js with its variables');
  const variables = Object.fromEntries([...envLine.matchAll(/(\w+)=(\S+)/g)].map(([, name, value]) => [name!, value!]));
  assert.ok(
    Object.keys(variables).length <= 5,
    `at most 5 variables, the README sets ${Object.keys(variables).join(', ')}`,
  );
  assert.match(envLine, /node server\.js$/);

  const { url: sandboxUrl } = await startSandbox(app, node, children);
  app.write('server.js', readmeBlock(QUICK_START, 'js'));
  app.write('checkout.html', readmeBlock(QUICK_START, 'html'));
  const port = await freePort();
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    env[name] = value
      .replace('http://127.0.0.1:4010', sandboxUrl)
      .replace('127.0.0.1:3000', `127.0.0.1:${port}`)
      .replace(/^3000$/, String(port));
  }
  const server = startChild(node, ['server.js'], { cwd: app.dir, env: cleanEnv({ ...env, OBV_LOG_LEVEL: 'warn' }) });
  children.push(server);
  const shop = `http://127.0.0.1:${port}`;
  await waitForHttp(`${shop}/obv/healthz`, server);
  assert.deepEqual(
    listeningAddresses(port),
    ['127.0.0.1'],
    'the quick start listens on this machine only (HOST unset)',
  );

  const context = await browser.newContext();
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  t.after(() => context.close());
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${shop}/`);
  const element = page.locator('obv-link-account');
  const [bank] = await Promise.all([
    context.waitForEvent('page'),
    element.getByRole('button', { name: 'Link your bank account' }).click(),
  ]);
  await signInAtBank(bank, 'user_good');
  await page.locator('obv-link-account[state="success"]').waitFor();
  assert.match(await element.locator('[part~="status"]').innerText(), /Checking ••••4321/);

  const [response] = await Promise.all([
    page.waitForResponse(`${shop}/pay`),
    page.getByRole('button', { name: 'Pay $49.99' }).click(),
  ]);
  assert.equal(response.status(), 201, await response.text());
  const transaction = (await response.json()) as { transactionStatus?: string; transactionId?: string };
  assert.equal(transaction.transactionStatus, 'APPROVED');
  assert.ok(transaction.transactionId);
  await saveScreenshot(page, 'package-express-paid').catch(() => undefined);
  // As the README says: Pay again (the same form, posted once more) and the order, paid once, answers 409 with that payment.
  const form = response.request().postData() ?? '';
  const again = await fetch(`${shop}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  assert.equal(again.status, 409);
  assert.equal(
    ((await again.json()) as { payment?: { transactionId?: string } }).payment?.transactionId,
    transaction.transactionId,
  );
  assert.deepEqual(problems, []);

  server.process.kill('SIGTERM');
  assert.equal(await server.exited(), 0, 'the README server stops on SIGTERM');
  const fields = new URLSearchParams(form);
  return {
    server,
    env,
    orderId: fields.get('orderId') ?? '',
    linkRef: fields.get('linkRef') ?? '',
    transactionId: transaction.transactionId,
  };
}

/**
 * After the quick start: a new process with `node` opens the proxy on the same ./obv-link-data (a
 * restart) and is asked for the order the README's server paid: still paid, with the same payment, and a
 * second payment refused (409). (The README's server keeps its orders in memory, so it cannot be asked
 * itself after a restart.)
 */
export async function stillPaidAfterRestart(
  app: TempApp,
  node: string,
  run: QuickStartRun,
  children: Child[],
): Promise<Child> {
  const server = readmeBlock(QUICK_START, 'js');
  const merchantUserId = /merchantUserId: '([^']+)'/.exec(server)?.[1];
  const order = /amount: '([^']+)', currency: '([^']+)'/.exec(server);
  assert.ok(merchantUserId && order, "the README's server names its shopper and its order's amount and currency");
  app.write(
    'still-paid.js',
    `
    import { configFromEnv, createObvProxy, ProblemError } from 'obv-link/proxy';
    const [orderId, linkRef] = process.argv.slice(2);
    const proxy = createObvProxy(configFromEnv());
    const payment = await proxy.readPayment(orderId);
    let again;
    try {
      await proxy.pay({ linkRef, merchantUserId: ${JSON.stringify(merchantUserId)}, merchantTransactionId: orderId, amount: ${JSON.stringify(order[1])}, currency: ${JSON.stringify(order[2])} });
      again = 'paid twice';
    } catch (error) {
      again = error instanceof ProblemError ? error.status : String(error);
    }
    await proxy.close();
    console.log('still-paid ' + JSON.stringify({ state: payment?.state, transactionId: payment?.transactionId, again }));
  `,
  );
  const check = startChild(node, ['still-paid.js', run.orderId, run.linkRef], {
    cwd: app.dir,
    env: cleanEnv({ ...run.env, OBV_LOG_LEVEL: 'error' }),
  });
  children.push(check);
  assert.equal(await check.exited(30_000), 0, check.output());
  const line = check
    .output()
    .split('\n')
    .find((text) => text.startsWith('still-paid '));
  const answer = JSON.parse(line?.slice('still-paid '.length) ?? '{}') as {
    state?: string;
    transactionId?: string;
    again?: unknown;
  };
  assert.deepEqual(answer, { state: 'completed', transactionId: run.transactionId, again: 409 }, check.output());
  return check;
}

/**
 * `npx obv-link-proxy` with `node`, no storage setting (SQLite in ./obv-link-data): a link and a payment
 * over its HTTP API, a SIGKILL, a restart; the order is refused a second payment (409, the first one) and
 * still answered. Returns the two boots.
 */
export async function paidOrderSurvivesSigkill(app: TempApp, node: string, children: Child[]): Promise<Child[]> {
  const { url: providerUrl } = await startSandbox(app, node, children);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const apiKey = 'tarball-merchant-api-key-0123456789abcdef';
  const boots: Child[] = [];
  const boot = () => {
    // No storage setting at all: the default is SQLite in ./obv-link-data.
    const child = startChild(node, [bin(app, 'obv-link-proxy')], {
      cwd: app.dir,
      env: cleanEnv({
        OBV_SANDBOX: 'true',
        OBV_BASE_URL: providerUrl,
        OBV_PUBLIC_URL: url,
        PORT: String(port),
        OBV_MERCHANT_API_KEY: apiKey,
        OBV_LOG_LEVEL: 'info',
      }),
    });
    children.push(child);
    boots.push(child);
    return child;
  };
  const api = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const order = `tarball-${Date.now()}`;
  const purchase = {
    merchantUserId: 'user-1',
    merchantTransactionId: order,
    amount: '12.50',
    currency: 'USD',
    consumer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
  };

  let proxy = boot();
  await proxy.waitFor(/obv-link proxy listening/);
  assert.match(proxy.output(), /state is kept in SQLite/);
  const { linkToken } = (await (
    await fetch(`${url}/obv/link-sessions`, { method: 'POST', headers: api, body: JSON.stringify(purchase) })
  ).json()) as { linkToken: string };
  const started = await fetch(`${url}/obv/verifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ linkToken }),
  });
  assert.equal(started.status, 201);
  const { sessionId, consumerUrl } = (await started.json()) as { sessionId: string; consumerUrl: string };
  await signInOverHttp(consumerUrl);
  const linkRef = await eventually(async () => {
    const session = (await (await lookupSession(`${url}/obv`, sessionId, { origin: url })).json()) as {
      outcome?: { linkRef?: string };
    };
    return session.outcome?.linkRef;
  });
  const pay = () =>
    fetch(`${url}/obv/transactions`, {
      method: 'POST',
      headers: api,
      body: JSON.stringify({
        linkRef,
        merchantUserId: 'user-1',
        merchantTransactionId: order,
        amount: '12.50',
        currency: 'USD',
      }),
    });
  const paid = await pay();
  assert.equal(paid.status, 201);
  const { transactionId } = (await paid.json()) as { transactionId: string };

  proxy.process.kill('SIGKILL');
  await proxy.exited();
  proxy = boot();
  await proxy.waitFor(/obv-link proxy listening/);
  const again = await pay();
  assert.equal(again.status, 409);
  assert.equal(((await again.json()) as { payment: { transactionId: string } }).payment.transactionId, transactionId);
  const record = (await (await fetch(`${url}/obv/transactions/${order}`, { headers: api })).json()) as {
    state: string;
    transactionId: string;
  };
  assert.deepEqual([record.state, record.transactionId], ['completed', transactionId]);
  assert.ok(existsSync(path.join(app.dir, 'obv-link-data', 'obv-link.sqlite')), 'the state is in ./obv-link-data');
  // A backup while it runs, by the installed command (its worker thread runs from the built package).
  const backupFile = `obv-link-backup-${boots.length}-${Date.now()}.sqlite`;
  const backup = startChild(node, [bin(app, 'obv-link-proxy'), 'backup', backupFile], {
    cwd: app.dir,
    env: cleanEnv({}),
  });
  children.push(backup);
  assert.equal(await backup.exited(), 0, backup.output());
  assert.match(
    backup.output(),
    /^backup: wrote \S+obv-link-backup-\S+\.sqlite \(.+, mode 0600\): a consistent copy of \S+obv-link-data\/obv-link\.sqlite, checked, in \d+ ms$/m,
  );
  assert.equal(statSync(path.join(app.dir, backupFile)).mode & 0o777, 0o600);
  proxy.process.kill('SIGTERM');
  assert.equal(await proxy.exited(), 0);
  return boots;
}

/** Node's experimental-feature warnings (`(node:…) ExperimentalWarning: SQLite is an experimental feature…`) in `text`. */
export function experimentalWarnings(text: string): string[] {
  return text.split('\n').filter((line) => /ExperimentalWarning|experimental feature/i.test(line));
}
