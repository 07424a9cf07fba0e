// The package as a merchant installs it: this checkout is packed once (`npm pack` runs the prepack build),
// then installed into fresh apps in temp folders with npm 12 and its default settings (no install script
// approved), no tsx and no bundler on the server side. The Express app is the README's quick start, file
// for file; the bins boot from env, refuse bad config, and on a Node too old say so in one line. The
// quick start and a restart also run on the lowest Node the package supports (22.13, fetched by
// scripts/node.sh). A strict TypeScript app type-checks against the package's declarations with
// skipLibCheck off. React 19 and Vue 3 apps are type-checked and built with Vite against the tarball,
// then driven in Chromium (frameworks.ts).
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseEnv } from 'node:util';
import type { Browser } from 'playwright-core';
import { launchChromium, signInAtBank, STEP_TIMEOUT_MS } from '../e2e/harness.ts';
import { driveFrameworkApp, prepareFrameworkApp, typeCheckWrongUsage, type FrameworkName } from './frameworks.ts';
import { cloneOnlyMentions, cloneOnlyOf, relativeLinks, snippetImports } from './markdown-code.ts';
import {
  experimentalWarnings,
  paidOrderSurvivesSigkill,
  quickStartLinksAndPays,
  stillPaidAfterRestart,
} from './quick-start.ts';
import { stripCloneOnly } from '../../scripts/package-readme.ts';
import { eventually } from '../node/redis/support.ts';
import { fetchedNode, lowestSupportedNode, nodeVersion, unsupportedNode } from '../helpers/node-runtimes.ts';
import {
  alive,
  bin,
  cleanEnv,
  copyFixture,
  descendants,
  exec,
  FIXTURES,
  freePort,
  listeningAddresses,
  npmLsFinds,
  npmScriptPolicy,
  packageTree,
  packThisCheckout,
  pendingInstallScripts,
  pinned,
  readmeBlock,
  ROOT,
  startChild,
  tempApp,
  waitForHttp,
  type Child,
  type InstallReport,
  type TempApp,
} from './temp-apps.ts';

/** The merchant's guides the README links to (docs/). */
const GUIDES = [
  'ELEMENT',
  'PROXY',
  'RETURNING-SHOPPERS',
  'EVENTS',
  'HOSTED-LINK',
  'SEVERAL-INSTANCES',
  'GOING-TO-PRODUCTION',
  'SANDBOX',
].map((name) => `docs/${name}.md`);
const HOSTED_QUICK_START = '## Quick start: a hosted link against the sandbox';

/** Tracked files that differ from HEAD (the build must leave this unchanged). */
function trackedChanges(): string {
  return execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' });
}

/**
 * npm 12 by default blocks every dependency's install script the app has not approved, and names them in
 * a warning. None may be of the package's own tree (obv-link and all it pulls in, from npm's dependency
 * graph); a blocked package outside that tree came with the app's own packages (a bundler the framework
 * apps install on purpose). Checks the npm and its settings first, so a machine whose npm runs or skips
 * every script cannot make this pass, and that npm's warning lists what `npm install-scripts ls` does, so
 * a warning the parser no longer reads cannot either. Returns the app's own blocked packages.
 */
async function blockedOutsideThePackage(app: TempApp, installed: InstallReport): Promise<string[]> {
  const { npm, settings } = await npmScriptPolicy(app);
  assert.ok(Number(npm.split('.')[0]) >= 12, `the apps install with npm 12 or later (this is npm ${npm})`);
  assert.equal(
    settings,
    'ignore-scripts=false\nallow-scripts=\ndangerously-allow-all-scripts=false',
    "npm's default install-script policy",
  );
  assert.deepEqual(
    installed.blocked,
    await pendingInstallScripts(app),
    `npm's warning names what waits for an approval:\n${installed.output}`,
  );
  const tree = await packageTree(app);
  assert.ok(
    ['express@', 'zod@', 'ws@'].every((dependency) => [...tree].some((name) => name.startsWith(dependency))),
    `npm query lists the package's dependencies: ${[...tree].join(', ')}`,
  );
  assert.deepEqual(
    installed.blocked.filter((name) => tree.has(name)),
    [],
    `an install script of the package's tree is blocked:\n${installed.output}`,
  );
  assert.equal(await npmLsFinds(app, 'better-sqlite3'), false, 'npm ls better-sqlite3 finds it');
  return installed.blocked.filter((name) => !tree.has(name));
}

let packDir: string;
let tarball: string;
let trackedBefore: string;
let trackedAfter: string;
let browser: Browser;

before(async () => {
  packDir = mkdtempSync(path.join(tmpdir(), 'obv-link-pack-'));
  trackedBefore = trackedChanges();
  tarball = await packThisCheckout(packDir);
  trackedAfter = trackedChanges();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  rmSync(packDir, { recursive: true, force: true });
});

test('the packed tarball holds compiled JavaScript, types, the bins and no tests or CI files, and the build touches no tracked file', async () => {
  assert.equal(trackedAfter, trackedBefore, 'npm pack (prepack build) changed tracked files');
  const files = (await exec('tar', ['-tzf', tarball], packDir))
    .split('\n')
    .filter(Boolean)
    .map((file) => file.replace(/^package\//, ''));
  for (const expected of [
    'package.json',
    'README.md',
    'bin/obv-link-proxy.js',
    'bin/obv-link-sandbox.js',
    'dist/proxy/index.js',
    'dist/proxy/index.d.ts',
    'dist/proxy/cli.js',
    'dist/sandbox/index.js',
    'dist/sandbox/index.d.ts',
    'dist/obv-link-account.js',
    'dist/types/widget/obv-link-account.d.ts',
    'dist/custom-elements.json',
    'dist/openapi.json',
    'examples/python-shop/shop.py',
    'examples/python-shop/webhooks.py',
    'frameworks/react.d.ts',
    'frameworks/vue.d.ts',
  ]) {
    assert.ok(files.includes(expected), `the tarball has ${expected}`);
  }
  assert.deepEqual(
    files.filter((file) => /\.ts$/.test(file) && !file.endsWith('.d.ts')),
    [],
    'no TypeScript sources',
  );
  assert.deepEqual(
    files.filter((file) => /(^|\/)(test|\.ci|demo\/checkout)\//.test(file)),
    [],
    'no tests, CI or checkout demo',
  );
  assert.ok(
    files.some((file) => /^dist\/cdn\/obv-link-account\.[0-9a-f]{10}\.js$/.test(file)),
    'the content-hashed element build',
  );
  const manifest = JSON.parse(await exec('tar', ['-xzOf', tarball, 'package/package.json'], packDir)) as Record<
    string,
    Record<string, string>
  >;
  assert.equal(manifest.scripts?.prepack, 'npm run build && tsx scripts/package-readme.ts strip');
  assert.equal(manifest.scripts?.postpack, 'tsx scripts/package-readme.ts restore');
  assert.equal(manifest.dependencies?.tsx, undefined, 'tsx is not a run-time dependency');
  assert.equal(manifest.dependencies?.ioredis, undefined, 'ioredis is optional');
  assert.ok(manifest.optionalDependencies?.ioredis);
});

test('the tarball carries the licence, the changelog, the security policy, and every file its documents link to', async () => {
  const files = (await exec('tar', ['-tzf', tarball], packDir))
    .split('\n')
    .filter(Boolean)
    .map((file) => file.replace(/^package\//, ''));
  for (const expected of ['LICENSE', 'CHANGELOG.md', 'SECURITY.md', 'docs/GOING-TO-PRODUCTION.md'])
    assert.ok(files.includes(expected), `the tarball has ${expected}`);
  const licence = await exec('tar', ['-xzOf', tarball, 'package/LICENSE'], packDir);
  const manifest = JSON.parse(await exec('tar', ['-xzOf', tarball, 'package/package.json'], packDir)) as {
    license?: string;
  };
  assert.equal(manifest.license, 'MIT');
  assert.match(licence, /^MIT License/, 'the LICENSE file is the MIT licence package.json names');
  const documents = files.filter((file) => file.endsWith('.md'));
  assert.ok(documents.includes('README.md') && documents.length >= 5, documents.join(', '));
  const broken: string[] = [];
  for (const document of documents) {
    const text = await exec('tar', ['-xzOf', tarball, `package/${document}`], packDir);
    for (const link of relativeLinks(text)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(document), link));
      // A file, or a folder that holds packed files (`docs/`).
      if (!files.includes(target) && !files.some((file) => file.startsWith(`${target.replace(/\/$/, '')}/`)))
        broken.push(`${document} → ${link}`);
    }
  }
  assert.deepEqual(broken, [], 'links that would be broken in the installed package');
});

test("the package's README is the clone's without its clone-only blocks: nothing in it exists only in a clone", async () => {
  const packed = await exec('tar', ['-xzOf', tarball, 'package/README.md'], packDir);
  const whole = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  assert.notEqual(packed, whole, 'the clone has a clone-only block to leave out');
  assert.equal(packed, stripCloneOnly(whole));
  assert.deepEqual(cloneOnlyMentions(packed, cloneOnlyOf(ROOT)), []);
  assert.match(packed, /### Quick start against the sandbox/);
  assert.equal(existsSync(path.join(ROOT, '.readme-clone.md')), false, 'postpack put the whole README back');
});

test('the content-hashed element build matches its SRI value, and the README snippet shows both', async () => {
  const cdn = JSON.parse(await exec('tar', ['-xzOf', tarball, 'package/dist/cdn/manifest.json'], packDir)) as {
    file: string;
    integrity: string;
  };
  const hashed = await execBuffer('tar', ['-xzOf', tarball, `package/dist/cdn/${cdn.file}`], packDir);
  const bundle = await execBuffer('tar', ['-xzOf', tarball, 'package/dist/obv-link-account.js'], packDir);
  assert.ok(hashed.equals(bundle), 'the hashed copy is the element bundle');
  assert.equal(cdn.integrity, `sha384-${createHash('sha384').update(hashed).digest('base64')}`);
  const snippet = readmeBlock('<!-- sri-snippet -->', 'html');
  assert.ok(
    snippet.includes(`/dist/cdn/${cdn.file}"`),
    `the README's CDN snippet names ${cdn.file} (copy it from \`npm run build\`)`,
  );
  assert.ok(
    snippet.includes(`integrity="${cdn.integrity}"`),
    `the README's CDN snippet shows integrity="${cdn.integrity}" (copy it from \`npm run build\`)`,
  );
});

describe('a plain-JavaScript Express 5 app that follows the README', () => {
  let app: TempApp;
  let installed: InstallReport;
  const children: Child[] = [];

  before(async () => {
    app = tempApp('express', tarball);
    // --omit=optional: one instance needs nothing but Node and the proxy's own dependencies (no Redis client).
    installed = await app.install([pinned('express')], ['--omit=optional']);
  });

  after(() => {
    for (const child of children) child.kill();
    app?.remove();
  });

  test('installs with npm 12 and its default settings: no install script to approve, none blocked, no better-sqlite3', async () => {
    assert.deepEqual(
      await blockedOutsideThePackage(app, installed),
      [],
      'express and the package need no install script',
    );
  });

  test('installs without the Redis client and without any TypeScript tooling', () => {
    assert.equal(existsSync(path.join(app.dir, 'node_modules/ioredis')), false);
    assert.equal(existsSync(path.join(app.dir, 'node_modules/tsx')), false);
    assert.equal(existsSync(path.join(app.dir, 'node_modules/typescript')), false);
  });

  test('imports every entry of the package in plain Node, as a server renderer does: no DOM needed, nothing registered, no global set', async () => {
    const manifest = JSON.parse(readFileSync(path.join(app.dir, 'node_modules/obv-link/package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    const entries = Object.keys(manifest.exports).map((key) => key.replace(/^\./, 'obv-link'));
    assert.ok(entries.includes('obv-link/react') && entries.includes('obv-link/element'), entries.join(', '));
    const script = `
      const results = {};
      for (const entry of ${JSON.stringify(entries)}) {
        try {
          const module = await import(entry, entry.endsWith('.json') ? { with: { type: 'json' } } : undefined);
          results[entry] = Object.keys(module).length > 0 ? 'ok' : 'no exports';
        } catch (error) {
          results[entry] = String(error);
        }
      }
      results.globals = ['HTMLElement', 'document', 'customElements', 'window'].filter((name) => name in globalThis).join(',') || 'none';
      console.log(JSON.stringify(results));`;
    const output = await exec(process.execPath, ['--input-type=module', '-e', script], app.dir, 60_000, cleanEnv());
    const results = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as Record<string, string>;
    for (const entry of entries) assert.equal(results[entry], 'ok', `import '${entry}' in Node`);
    assert.equal(results.globals, 'none', 'importing defines no browser global on the server');
  });

  test('every import in the code blocks of the README and its guides resolves against the package, with the names it imports', async () => {
    const documents = ['README.md', ...GUIDES];
    const imports = documents.flatMap((file) => snippetImports(readFileSync(path.join(ROOT, file), 'utf8'), file));
    assert.ok(
      imports.filter((found) => found.specifier.startsWith('obv-link')).length >= 6,
      'the snippets import the package',
    );
    // What a snippet's reader installs beside obv-link (the README says so where they are used).
    const theirOwn = new Set([
      'express',
      'react',
      'vue',
      '@vitejs/plugin-vue',
      'standardwebhooks',
      'expo-linking',
      'expo-web-browser',
    ]);
    const problems: string[] = [];
    for (const found of imports) {
      const { specifier, names, where } = found;
      // node: built-ins, what the reader installs, and the reader's own files beside the snippet (./db.js).
      if (specifier.startsWith('node:') || theirOwn.has(specifier) || specifier.startsWith('./')) continue;
      if (!specifier.startsWith('obv-link')) {
        problems.push(`${where}: ${specifier} is not something a merchant's app can import`);
        continue;
      }
      const script = `const module = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(${JSON.stringify(names)}.filter((name) => !(name in module))));`;
      try {
        const missing = JSON.parse(
          (await exec(process.execPath, ['--input-type=module', '-e', script], app.dir, 60_000, cleanEnv()))
            .trim()
            .split('\n')
            .at(-1) ?? '[]',
        ) as string[];
        if (missing.length > 0) problems.push(`${where}: ${specifier} does not export ${missing.join(', ')}`);
      } catch (error) {
        problems.push(`${where}: ${specifier} does not resolve: ${String(error).split('\n').slice(0, 3).join(' ')}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  test('npx obv-link-proxy refuses bad config naming each variable, and boots from env', async () => {
    const refused = startChild('npx', ['--no-install', 'obv-link-proxy'], {
      cwd: app.dir,
      env: cleanEnv({ OBV_PUBLIC_URL: 'not a url' }),
    });
    children.push(refused);
    assert.equal(await refused.exited(), 1);
    assert.match(refused.output(), /OBV_BASE_URL: is required/);
    assert.match(refused.output(), /OBV_PUBLIC_URL: must be an absolute http\(s\) URL/);

    // Installed without optional dependencies, asking for Redis names the package to install.
    const noRedis = startChild(bin(app, 'obv-link-proxy'), [], {
      cwd: app.dir,
      env: cleanEnv({
        OBV_SANDBOX: 'true',
        OBV_BASE_URL: 'http://127.0.0.1:9',
        OBV_PUBLIC_URL: 'http://127.0.0.1:9',
        OBV_REDIS_URL: 'redis://127.0.0.1:9',
        PORT: '0',
      }),
    });
    children.push(noRedis);
    assert.notEqual(await noRedis.exited(), 0);
    assert.match(noRedis.output(), /optional dependency ioredis is not installed \(npm install ioredis\)/);
    // Likewise PostgreSQL names pg.
    const noPostgres = startChild(bin(app, 'obv-link-proxy'), [], {
      cwd: app.dir,
      env: cleanEnv({
        OBV_SANDBOX: 'true',
        OBV_BASE_URL: 'http://127.0.0.1:9',
        OBV_PUBLIC_URL: 'http://127.0.0.1:9',
        OBV_DATABASE_URL: 'postgres://127.0.0.1:9/shop',
        PORT: '0',
      }),
    });
    children.push(noPostgres);
    assert.notEqual(await noPostgres.exited(), 0);
    assert.match(noPostgres.output(), /optional dependency pg is not installed \(npm install pg\)/);

    const port = await freePort();
    // The bin itself (what npx runs), so the signal below reaches the proxy and not npm.
    const proxy = startChild(bin(app, 'obv-link-proxy'), [], {
      cwd: app.dir,
      env: cleanEnv({
        OBV_SANDBOX: 'true',
        OBV_BASE_URL: 'http://127.0.0.1:9',
        OBV_PUBLIC_URL: `http://127.0.0.1:${port}`,
        PORT: String(port),
      }),
    });
    children.push(proxy);
    await proxy.waitFor(/obv-link proxy listening/);
    const health = await fetch(`http://127.0.0.1:${port}/obv/healthz`);
    assert.deepEqual(await health.json(), { status: 'ok' });
    proxy.process.kill('SIGTERM');
    assert.equal(await proxy.exited(), 0);
  });

  test('the installed bins answer --help and --version with no setting, and npx obv-link-proxy init writes a production file the proxy reads', async () => {
    const version = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    for (const name of ['obv-link-proxy', 'obv-link-sandbox']) {
      const versionRun = startChild(bin(app, name), ['--version'], { cwd: app.dir, env: cleanEnv({}) });
      children.push(versionRun);
      assert.equal(await versionRun.exited(), 0);
      assert.equal(versionRun.output().trim(), `obv-link ${version}`, `${name} --version`);
      const help = startChild(bin(app, name), ['--help'], { cwd: app.dir, env: cleanEnv({}) });
      children.push(help);
      assert.equal(await help.exited(), 0);
      assert.match(
        help.output(),
        name === 'obv-link-proxy'
          ? /^ {2}OBV_CLIENT_SECRET .*\[required\]$/m
          : /^ {2}PROVIDER_PORT .*\[default 4010\]$/m,
      );
    }
    const flags = {
      'base-url': 'https://api.provider.example',
      'client-id': 'shop',
      'client-secret': 'from-the-provider',
      'webhook-secret': `whsec_${Buffer.from('the-provider-webhook-secret-0123456789').toString('base64')}`,
      'merchant-id': 'm-1',
      'pgw-app-id': 'app',
      'pgw-client-id': 'pgw',
      'public-url': 'https://pay.shop.example',
    };
    const init = startChild(
      'npx',
      [
        '--no-install',
        'obv-link-proxy',
        'init',
        '--yes',
        '--out',
        'prod.env',
        ...Object.entries(flags).flatMap(([flag, value]) => [`--${flag}`, value]),
      ],
      { cwd: app.dir, env: cleanEnv({}) },
    );
    children.push(init);
    assert.equal(await init.exited(), 0, init.output());
    assert.equal(statSync(path.join(app.dir, 'prod.env')).mode & 0o777, 0o600);
    const env = parseEnv(readFileSync(path.join(app.dir, 'prod.env'), 'utf8'));
    assert.match(env.OBV_SEALING_KEYS ?? '', /^\d{4}-\d{2}:[A-Za-z0-9+/]{43}=$/);
    rmSync(path.join(app.dir, 'prod.env'));
  });

  test('npx obv-link-proxy keeps its state in ./obv-link-data: an order paid before a SIGKILL is refused after the restart, and still answered', async () => {
    await paidOrderSurvivesSigkill(app, process.execPath, children);
  });

  test('on a Node older than it supports, the bins say so in one line and exit 1 (run directly or by npx), and createObvProxy names the Node it needs', async () => {
    const { node: old, version } = await unsupportedNode();
    const needed = lowestSupportedNode();
    for (const name of ['obv-link-proxy', 'obv-link-sandbox']) {
      const line = `${name} needs Node.js ${needed} or later; this is Node.js ${version}. Install Node.js 24 LTS (https://nodejs.org/) and run it again.`;
      const direct = startChild(old, [bin(app, name)], {
        cwd: app.dir,
        env: cleanEnv({ OBV_SANDBOX: 'true', PROVIDER_PORT: '0' }),
      });
      children.push(direct);
      assert.equal(await direct.exited(), 1);
      assert.equal(direct.output(), `${line}\n`);
      // As on a machine whose `node` is that one: npx (its npm, when it has one beside it) runs the bin's shebang with it.
      const npx = startChild('npx', ['--no-install', name], {
        cwd: app.dir,
        env: cleanEnv({ PATH: `${path.dirname(old)}:${process.env.PATH ?? ''}`, OBV_SANDBOX: 'true' }),
      });
      children.push(npx);
      assert.equal(await npx.exited(30_000), 1, npx.output());
      assert.deepEqual(
        npx
          .output()
          .split('\n')
          .filter((text) => text && !text.startsWith('npm ')),
        [line],
        "one line besides npm's own notices",
      );
    }
    // Mounted in an app on that Node, the default storage names the Node it needs (storage/sqlite/driver.ts).
    const script = `
      import { createObvProxy } from 'obv-link/proxy';
      try {
        createObvProxy({ sandbox: true, baseUrl: 'http://127.0.0.1:9', publicUrl: 'http://127.0.0.1:9', dataDir: 'old-node-data', logLevel: 'silent' });
        console.log('created');
      } catch (error) {
        console.log(error.name + ': ' + error.message);
      }`;
    const output = await exec(old, ['--input-type=module', '-e', script], app.dir, 60_000, cleanEnv());
    // One line naming the Node needed (its major.minor at least), the one found, and what to do.
    const [said = '', ...rest] = output.split('\n').filter(Boolean);
    assert.deepEqual(rest, [], output);
    assert.match(said, /^SqliteUnavailableError: /);
    assert.ok(said.includes(needed.split('.').slice(0, 2).join('.')) && said.includes(version), said);
    assert.match(said, /upgrade|install/i);
  });

  test('the hosted-link quick start (docs/HOSTED-LINK.md), word for word: an order, its hosted page on a phone-sized Chromium, the way back, the payment', async (t) => {
    const guide = readFileSync(path.join(ROOT, 'docs/HOSTED-LINK.md'), 'utf8');
    const envLine = readmeBlock(HOSTED_QUICK_START, 'sh', guide)
      .split('\n')
      .find((line) => line.startsWith('OBV_SANDBOX='));
    assert.ok(envLine, 'the hosted quick start runs hosted-server.js with its variables');
    assert.match(envLine, /node hosted-server\.js$/);
    const variables = Object.fromEntries(
      [...envLine.matchAll(/(\w+)=(\S+)/g)].map(([, name, value]) => [name!, value!]),
    );

    const sandbox = startChild(bin(app, 'obv-link-sandbox'), [], {
      cwd: app.dir,
      env: cleanEnv({ PROVIDER_PORT: '0', PROVIDER_LOG_LEVEL: 'warn' }),
    });
    children.push(sandbox);
    const [, sandboxUrl] = await sandbox.waitFor(/listening on (http:\/\/\S+)/);
    app.write('hosted-server.js', readmeBlock(HOSTED_QUICK_START, 'js', guide));
    const port = await freePort();
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(variables)) {
      env[name] = value
        .replace('http://127.0.0.1:4010', sandboxUrl!)
        .replace('127.0.0.1:3000', `127.0.0.1:${port}`)
        .replace(/^3000$/, String(port));
    }
    const server = startChild(process.execPath, ['hosted-server.js'], {
      cwd: app.dir,
      env: cleanEnv({ ...env, OBV_LOG_LEVEL: 'warn' }),
    });
    children.push(server);
    const shop = `http://127.0.0.1:${port}`;
    await waitForHttp(`${shop}/obv/healthz`, server);

    // The app asks for a bank link (the guide's curl), and opens the page (the installed element, with its SRI).
    const created = await fetch(`${shop}/orders`, { method: 'POST' });
    assert.equal(created.status, 201);
    const { orderId, hostedUrl } = (await created.json()) as { orderId: string; hostedUrl: string };
    assert.match(hostedUrl, new RegExp(`^${shop}/obv/hosted/hl_[A-Za-z0-9_-]{32}$`));
    const context = await browser.newContext({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    t.after(() => context.close());
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    // CSP violations are console errors; a missing file is named by its response (the shop has no favicon, as in the guide).
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        problems.push(message.text());
    });
    page.on('response', (response) => {
      if (response.status() >= 400 && !response.url().endsWith('/favicon.ico'))
        problems.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(hostedUrl);
    const [bank] = await Promise.all([
      context.waitForEvent('page'),
      page.locator('obv-link-account').getByRole('button', { name: 'Link your bank account' }).tap(),
    ]);
    await signInAtBank(bank, 'user_good');
    await page.waitForURL((url) => url.pathname === '/linked');
    const back = new URL(page.url());
    assert.deepEqual([...back.searchParams.keys()], ['status', 'state']);
    assert.equal(back.searchParams.get('status'), 'linked');
    assert.equal(await page.locator('body').innerText(), `${orderId}: linked`);
    assert.deepEqual(problems, []);

    const paid = await fetch(`${shop}/orders/${orderId}/pay`, { method: 'POST' });
    assert.ok(paid.status < 300, await paid.clone().text());
    assert.equal(((await paid.json()) as { transactionStatus?: string }).transactionStatus, 'APPROVED');
    server.process.kill('SIGTERM');
    assert.equal(await server.exited(), 0, 'the hosted quick start stops on SIGTERM');
  });

  test('npx obv-link-sandbox boots from env and stops cleanly on SIGTERM and SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const sandbox = startChild(bin(app, 'obv-link-sandbox'), [], {
        cwd: app.dir,
        env: cleanEnv({ PROVIDER_PORT: '0', PROVIDER_LOG_LEVEL: 'warn' }),
      });
      children.push(sandbox);
      const [, url] = await sandbox.waitFor(/listening on (http:\/\/\S+)/);
      const token = await fetch(
        `${url}/exp/auth/mint/v1/oauth2/token?grant_type=client_credentials&scope=obv%2Ftoken-request`,
        {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from('sandbox_client:sandbox_secret').toString('base64')}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
        },
      );
      assert.equal(token.status, 200, `the sandbox issues a token (${url})`);
      sandbox.process.kill(signal);
      assert.equal(await sandbox.exited(), 0, `exit code after ${signal}`);
    }
    const refused = startChild('npx', ['--no-install', 'obv-link-sandbox'], {
      cwd: app.dir,
      env: cleanEnv({ PROVIDER_PORT: 'eighty' }),
    });
    children.push(refused);
    assert.equal(await refused.exited(), 1);
    assert.match(refused.output(), /PROVIDER_PORT/);
  });

  test('npx obv-link-sandbox <control> sets a control on the running sandbox (fail-next, status, reset), prints --help, and says when no sandbox answers', async () => {
    const sandbox = startChild(bin(app, 'obv-link-sandbox'), [], {
      cwd: app.dir,
      env: cleanEnv({ PROVIDER_PORT: '0', PROVIDER_LOG_LEVEL: 'warn' }),
    });
    children.push(sandbox);
    const [, url] = await sandbox.waitFor(/listening on (http:\/\/\S+)/);
    const npx = async (args: string[], env: Record<string, string> = {}) => {
      const child = startChild('npx', ['--no-install', 'obv-link-sandbox', ...args], {
        cwd: app.dir,
        env: cleanEnv(env),
      });
      children.push(child);
      return { code: await child.exited(30_000), output: child.output() };
    };
    const failNext = await npx(['fail-next', '--code', 'ACCOUNT_LOCKED', '--url', url!]);
    assert.equal(failNext.code, 0, failNext.output);
    assert.match(failNext.output, /fail-next: 1 verification with ACCOUNT_LOCKED/);
    const status = await npx(['status', '--url', url!]);
    assert.match(status.output, /fail-next: 1 verification with ACCOUNT_LOCKED/);
    assert.equal((await npx(['reset', '--url', url!])).code, 0);
    assert.match((await npx(['status', '--url', url!])).output, /fail-next: off/);
    const help = await npx(['--help']);
    assert.deepEqual([help.code, /notify-twice/.test(help.output)], [0, true]);
    const nobody = await npx(['status'], { PROVIDER_PORT: String(await freePort()) });
    assert.equal(nobody.code, 1);
    assert.match(nobody.output, /no sandbox answers at http:\/\/127\.0\.0\.1:\d+/);
    sandbox.process.kill('SIGTERM');
    assert.equal(await sandbox.exited(), 0);
  });

  // SIGTERM and SIGINT go to npx's process alone (`kill`, `docker stop` with npx as PID 1, systemd's main pid); SIGINT
  // also to its process group, as Ctrl-C in a terminal sends it. npm passes a signal to `sh -c` only, which dies of
  // SIGTERM but holds a SIGINT until node ends: bin/stop-with-npm.js stops node in both cases.
  test('npx obv-link-proxy (sandbox mode) and npx obv-link-sandbox listen on loopback, and SIGTERM or SIGINT to npx, or Ctrl-C, stops them: the port closes, no node process is left', async () => {
    for (const name of ['obv-link-sandbox', 'obv-link-proxy'] as const) {
      for (const [signal, target] of [
        ['SIGTERM', 'npx'],
        ['SIGINT', 'npx'],
        ['SIGINT', 'group'],
      ] as const) {
        const port = await freePort();
        const env: Record<string, string> =
          name === 'obv-link-sandbox'
            ? { PROVIDER_PORT: String(port), PROVIDER_LOG_LEVEL: 'warn' }
            : {
                OBV_SANDBOX: 'true',
                OBV_BASE_URL: 'http://127.0.0.1:9',
                OBV_PUBLIC_URL: `http://127.0.0.1:${port}`,
                PORT: String(port),
                OBV_STORAGE: 'memory',
                OBV_DRAIN_WINDOW: '0',
              };
        // What Docker or systemd runs and signals: npx (npm exec → sh -c → node), not the bin.
        const npx = startChild('npx', ['--no-install', name], { cwd: app.dir, env: cleanEnv(env), group: true });
        children.push(npx);
        await npx.waitFor(name === 'obv-link-sandbox' ? /listening on http/ : /obv-link proxy listening/);
        const below = await descendants(npx.process.pid!);
        try {
          assert.deepEqual(listeningAddresses(port), ['127.0.0.1'], `${name} listens on loopback by default`);
          if (name === 'obv-link-proxy')
            assert.match(npx.output(), /listening on 127\.0\.0\.1 only \(HOST=0\.0\.0\.0 listens on every interface\)/);
          if (target === 'npx') npx.process.kill(signal);
          else process.kill(-npx.process.pid!, signal);
          await npx.exited();
          await eventually(
            async () => (listeningAddresses(port).length === 0 && below.every((pid) => !alive(pid))) || undefined,
            10_000,
          ).catch(() => undefined);
          assert.deepEqual(
            listeningAddresses(port),
            [],
            `nothing listens on ${port} after ${signal} to the ${target} of ${name}`,
          );
          assert.deepEqual(
            below.filter(alive),
            [],
            `no process npx started is left after ${signal} to the ${target} of ${name}:\n${npx.output()}`,
          );
        } finally {
          for (const pid of below.filter(alive)) process.kill(pid, 'SIGKILL');
        }
      }
    }
  });

  test('mounts the proxy with the README lines, serves the element with a script tag, and links and pays in Chromium', async (t) => {
    await quickStartLinksAndPays(t, app, browser, process.execPath, children);
  });
});

// npm 12 itself does not run on Node 22.13 (its engines: ^22.22.2 || ^24.15.0), and a merchant there
// installs with the npm they have; the files are the same for a tree with no install script. What the
// lowest Node changes is the runtime: every process of this app runs on it.
describe(`the README's quick start on the lowest Node the package supports (${lowestSupportedNode()})`, () => {
  let app: TempApp;
  let installed: InstallReport;
  let node: string;
  const children: Child[] = [];

  before(async () => {
    node = await fetchedNode(lowestSupportedNode());
    app = tempApp('lowest-node', tarball);
    // A merchant's plain install: the optional dependencies (the Redis client) too.
    installed = await app.install([pinned('express')]);
  });

  after(() => {
    for (const child of children) child.kill();
    app?.remove();
  });

  test('installs with its optional dependencies, and npm blocks no install script', async () => {
    assert.equal(await nodeVersion(node), lowestSupportedNode());
    assert.deepEqual(await blockedOutsideThePackage(app, installed), []);
  });

  test('links and pays in Chromium, and after a restart the order is still paid; the terminal shows no experimental warning', async (t) => {
    const run = await quickStartLinksAndPays(t, app, browser, node, children);
    const restarted = await stillPaidAfterRestart(app, node, run, children);
    // Node 22 warns that node:sqlite is experimental when it loads; the proxy keeps that one warning away.
    assert.deepEqual(experimentalWarnings(run.server.errors() + restarted.errors()), []);
  });

  test('npx obv-link-proxy keeps its state: an order paid before a SIGKILL is refused after the restart; no experimental warning', async () => {
    const boots = await paidOrderSurvivesSigkill(app, node, children);
    assert.deepEqual(experimentalWarnings(boots.map((boot) => boot.errors()).join('')), []);
  });
});

describe('a TypeScript app (strict, skipLibCheck off) with only the package, express, typescript and @types/node installed', () => {
  let app: TempApp;

  before(async () => {
    app = tempApp('typescript', tarball);
    copyFixture(app, 'typescript');
    await app.install(['express', 'typescript', '@types/node'].map(pinned));
  });

  after(() => app?.remove());

  test("type-checks against the package's declarations (fixtures/typescript), with the optional dependencies and without them", async () => {
    const tsc = () => exec(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.'], app.dir);
    await tsc();
    await exec('npm', ['prune', '--omit=optional'], app.dir, 60_000, cleanEnv());
    assert.equal(
      existsSync(path.join(app.dir, 'node_modules/ioredis')),
      false,
      'npm prune --omit=optional removed the Redis client',
    );
    await tsc();
  });

  test("narrows a merchant event by its type (fixtures/typescript/src/event-handler.ts: event.data.linkRef after event.type === 'link.succeeded'), and refuses a field another type has", async () => {
    // The handler in the fixture compiled above; a wrong one beside it must fail on exactly its marked lines.
    const file = 'wrong-events.ts';
    const text = readFileSync(path.join(FIXTURES, 'type-errors', file), 'utf8');
    app.write(path.join('src', file), text);
    try {
      const output = await exec(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.'], app.dir).then(
        () => assert.fail(`tsc accepted src/${file}`),
        (error: unknown) => String(error),
      );
      const flagged = [
        ...new Set([...output.matchAll(/src\/wrong-events\.ts\((\d+),\d+\): error/g)].map((match) => Number(match[1]))),
      ].sort((a, b) => a - b);
      const refused = text
        .split('\n')
        .flatMap((line, index) => (/refused:/.test(line) && !/^\s*\/\//.test(line) ? [index + 1] : []));
      assert.ok(refused.length >= 4, `the fixture marks the refused lines (${refused.join(', ')})`);
      assert.deepEqual(flagged, refused, `every line marked "refused" is flagged, and no other:\n${output}`);
    } finally {
      rmSync(path.join(app.dir, 'src', file));
    }
  });
});

for (const framework of ['react', 'vue'] as FrameworkName[]) {
  describe(`a ${framework === 'react' ? 'React 19' : 'Vue 3'} app built with Vite against the tarball`, () => {
    let app: TempApp;
    let installed: InstallReport;

    before(async () => {
      ({ app, installed } = await prepareFrameworkApp(framework, tarball));
    });

    after(() => app?.remove());

    test("npm blocks no install script of the package's tree (what it blocks is the app's own tooling)", async () => {
      await blockedOutsideThePackage(app, installed);
    });

    test('type-checks and builds, and its element takes attributes, properties (strings, disabled both ways), events and gives the form value', async () => {
      await driveFrameworkApp(framework, app, browser);
    });

    test('its type checker refuses what the element does not take: a non-string link-token or proxy-url, a state set by hand, a string for disabled, unknown strings', async () => {
      const { flagged, refused, output } = await typeCheckWrongUsage(framework, app);
      assert.ok(refused.length >= 5, `the fixture marks the refused lines (${refused.join(', ')})`);
      assert.deepEqual(flagged, refused, `every line marked "refused" is flagged, and no other:\n${output}`);
    });
  });
}

/** A command's stdout as bytes (tar -xO of a file in the tarball). */
function execBuffer(command: string, args: string[], cwd: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, encoding: 'buffer', maxBuffer: 16 * 1024 * 1024 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
  });
}
