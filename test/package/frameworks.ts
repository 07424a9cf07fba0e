// The React 19 and Vue 3 apps of the installed-package test: the fixture copied into a temp folder,
// the tarball and the framework installed with npm, type-checked (tsc / vue-tsc) and built by Vite, then
// served beside a proxy and the sandbox and driven in Chromium.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import { startProvider } from '../../sandbox/index.ts';
import { createObvProxy } from '../../proxy/index.ts';
import { SANDBOX_DEFAULTS } from '../../proxy/config/sandbox-defaults.ts';
import { saveScreenshot, signInAtBank, STEP_TIMEOUT_MS } from '../e2e/harness.ts';
import {
  copyFixture,
  exec,
  FIXTURES,
  freePort,
  pinned,
  tempApp,
  type InstallReport,
  type TempApp,
} from './temp-apps.ts';

export type FrameworkName = 'react' | 'vue';

const SETUP: Record<FrameworkName, { packages: string[]; typeCheck: string[]; label: string; wrong: string }> = {
  react: {
    wrong: 'wrong.tsx',
    packages: ['react', 'react-dom', '@types/react', '@types/react-dom', 'vite', 'typescript'],
    typeCheck: ['node_modules/typescript/bin/tsc', '-p', '.'],
    label: 'Connect with React',
  },
  vue: {
    wrong: 'Wrong.vue',
    packages: ['vue', 'vite', '@vitejs/plugin-vue', 'vue-tsc', 'typescript'],
    typeCheck: ['node_modules/vue-tsc/bin/vue-tsc.js', '-p', '.'],
    label: 'Connect with Vue',
  },
};

/** The app installed (and what npm said), type-checked and built into `dist/` (a type error fails here with tsc's output). */
export async function prepareFrameworkApp(
  framework: FrameworkName,
  tarball: string,
): Promise<{ app: TempApp; installed: InstallReport }> {
  const app = tempApp(framework, tarball);
  try {
    copyFixture(app, framework);
    const installed = await app.install(SETUP[framework].packages.map(pinned));
    await exec(process.execPath, SETUP[framework].typeCheck, app.dir);
    await exec(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'], app.dir);
    return { app, installed };
  } catch (error) {
    app.remove();
    throw error;
  }
}

/**
 * The type checker's verdict on fixtures/type-errors/<file> placed in the app's src/: the lines it
 * flagged, and the lines the file marks "refused" (each must be flagged, and nothing else).
 */
export async function typeCheckWrongUsage(
  framework: FrameworkName,
  app: TempApp,
): Promise<{ flagged: number[]; refused: number[]; output: string }> {
  const file = SETUP[framework].wrong;
  const text = readFileSync(path.join(FIXTURES, 'type-errors', file), 'utf8');
  app.write(path.join('src', file), text);
  try {
    const output = await exec(process.execPath, SETUP[framework].typeCheck, app.dir).then(
      () => assert.fail(`the type checker accepted src/${file}`),
      (error: unknown) => String(error),
    );
    const at = new RegExp(`src/${file.replace('.', '\\.')}\\((\\d+),\\d+\\): error`, 'g');
    const flagged = [...new Set([...output.matchAll(at)].map((match) => Number(match[1])))].sort((a, b) => a - b);
    const refused = text
      .split('\n')
      .flatMap((line, index) => (/refused:/.test(line) && !/^\s*(<!--|\/\/)/.test(line) ? [index + 1] : []));
    return { flagged, refused, output };
  } finally {
    rmSync(path.join(app.dir, 'src', file));
  }
}

/** Serves the built app with a proxy at /obv against a sandbox, and checks the element from the page. */
export async function driveFrameworkApp(framework: FrameworkName, app: TempApp, browser: Browser): Promise<void> {
  const provider = await startProvider({ port: 0, notificationRetryDelaysMs: [50, 100, 200] });
  const port = await freePort();
  const proxy = createObvProxy({
    ...SANDBOX_DEFAULTS,
    sandbox: true,
    storage: 'memory',
    baseUrl: provider.url,
    publicUrl: `http://127.0.0.1:${port}`,
    logLevel: 'silent',
  });
  const site = express();
  site.use(proxy.mountPath, proxy.router);
  // The merchant's server: one link session per checkout page, as in the README's quick start.
  site.post('/checkout/link-token', (_req, res, next) => {
    proxy
      .createLinkSession({
        merchantUserId: `${framework}-user`,
        merchantTransactionId: `${framework}-order-${Date.now()}`,
        amount: '12.50',
        currency: 'USD',
        consumer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
      })
      .then(({ linkToken }) => res.json({ linkToken }), next);
  });
  site.use(express.static(path.join(app.dir, 'dist')));
  const server: Server = site.listen(port, '127.0.0.1');
  await once(server, 'listening');
  proxy.attachRelay(server);
  const context = await browser.newContext();
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  try {
    await page.goto(`http://127.0.0.1:${port}/`);
    await checkElement(page, framework);
    assert.deepEqual(problems, []);
  } finally {
    await saveScreenshot(page, `package-${framework}`).catch(() => undefined);
    await context.close();
    await proxy.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await provider.close();
  }
}

async function checkElement(page: Page, framework: FrameworkName): Promise<void> {
  const element = page.locator('obv-link-account');
  const linkButton = element.getByRole('button', { name: SETUP[framework].label });
  const innerButtonDisabled = () =>
    element
      .locator('button')
      .first()
      .evaluate((button) => (button as HTMLButtonElement).disabled);

  // Attributes reach the element's properties; `strings` arrives as a property (an object).
  await linkButton.waitFor();
  const read = await element.evaluate((el) => {
    const obv = el as HTMLElement & { linkToken?: string; strings?: { linkAccount?: string }; disabled: boolean };
    return {
      linkToken: /^lt_/.test(obv.linkToken ?? ''),
      strings: obv.strings?.linkAccount,
      disabled: obv.disabled,
      stringsAttribute: el.getAttribute('strings'),
    };
  });
  assert.deepEqual(read, { linkToken: true, strings: SETUP[framework].label, disabled: false, stringsAttribute: null });

  // `disabled` both ways, as the framework sets it (a property).
  await page.locator('#lock').click();
  await page.waitForFunction(
    () => (document.querySelector('obv-link-account') as HTMLElement & { disabled: boolean }).disabled === true,
  );
  await expectEventually(innerButtonDisabled, true, 'the inner button disabled');
  await page.locator('#lock').click();
  await page.waitForFunction(
    () => (document.querySelector('obv-link-account') as HTMLElement & { disabled: boolean }).disabled === false,
  );
  await expectEventually(innerButtonDisabled, false, 'the inner button enabled again');

  // Events reach the framework's listeners; the linked account becomes the form's value.
  const [bank] = await Promise.all([page.context().waitForEvent('page'), linkButton.click()]);
  await signInAtBank(bank, 'user_good');
  await page.locator('obv-link-account[state="success"]').waitFor();
  await page.locator('#events li', { hasText: 'obv-success Checking ••••4321' }).waitFor();
  assert.equal(await page.locator('#events li').first().innerText(), 'obv-start');
  const formValue = await page.evaluate(() => {
    const form = document.querySelector<HTMLFormElement>('#checkout')!;
    return {
      submitted: new FormData(form).get('bankAccount'),
      value: (document.querySelector('obv-link-account') as HTMLElement & { value: string }).value,
    };
  });
  assert.ok(
    typeof formValue.submitted === 'string' && formValue.submitted.length > 0,
    'the form carries the linked account',
  );
  assert.equal(formValue.submitted, formValue.value);
}

async function expectEventually<T>(read: () => Promise<T>, expected: T, what: string): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  let last: T = await read();
  while (last !== expected) {
    if (Date.now() > deadline) assert.fail(`${what}: still ${String(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
    last = await read();
  }
}
