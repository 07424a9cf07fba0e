// docs/GOING-TO-PRODUCTION.md's staging rehearsal, run as written: its staging-provider.mjs serves the
// sandbox over https with a certificate of a CA made for the test (openssl), and its proxy command boots
// outside sandbox mode against it. With NODE_EXTRA_CA_CERTS naming that CA, the boot's token request is
// accepted; without it, the proxy cannot reach the provider — which is what the page's section 3 says.
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../helpers/free-port.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const page = readFileSync(path.join(ROOT, 'docs/GOING-TO-PRODUCTION.md'), 'utf8');

/** The first fenced block of `language` after `marker` on the page. */
function block(marker: string, language: string): string {
  const start = page.indexOf(marker);
  assert.ok(start >= 0, `the page has "${marker}"`);
  const code = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(page.slice(start))?.[1];
  assert.ok(code, `a ${language} block after "${marker}"`);
  return code;
}

interface Running {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp): Promise<void>;
}

function run(args: string[], cwd: string, env: Record<string, string>): Running {
  const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return {
    child,
    output: () => text,
    async waitFor(pattern) {
      for (let i = 0; i < 600 && !pattern.test(text); i++) {
        if (child.exitCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.match(text, pattern);
    },
  };
}

describe("the production guide's staging rehearsal", () => {
  let dir: string;
  let provider: Running | undefined;
  const children: Running[] = [];
  const staging = {
    STAGING_CLIENT_ID: 'staging-client-7c1e',
    STAGING_CLIENT_SECRET: randomBytes(24).toString('base64url'),
    STAGING_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
    STAGING_SEALING_KEYS: `staging-1:${randomBytes(32).toString('base64')}`,
    STAGING_PROVIDER_PORT: '',
  };

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'obv-staging-'));
    // A CA of the test's own, and the sandbox's certificate for 127.0.0.1 signed by it.
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca-key.pem', '-out', 'staging-ca.pem', '-days', '1', '-subj', '/CN=obv-link staging CA');
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'sandbox-key.pem', '-out', 'sandbox.csr', '-subj', '/CN=127.0.0.1');
    writeFileSync(path.join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
    openssl('x509', '-req', '-in', 'sandbox.csr', '-CA', 'staging-ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'sandbox-cert.pem', '-days', '1', '-extfile', 'san.cnf');

    const script = block('## 4. A staging rehearsal', 'js').replace("from 'obv-link/sandbox'", `from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'sandbox/index.ts')).href)}`);
    assert.ok(script.includes('sandbox/index.ts'), 'the script imports obv-link/sandbox');
    writeFileSync(path.join(dir, 'staging-provider.mjs'), script);
    staging.STAGING_PROVIDER_PORT = String(await freePort());
    // The script runs from its own folder (its certificate paths are relative); tsx loads the sandbox's TypeScript.
    provider = run(['--import', import.meta.resolve('tsx'), 'staging-provider.mjs'], dir, staging);
    // Ready once it answers TLS with the test CA's certificate.
    for (let i = 0; i < 200; i++) {
      const up = await new Promise<boolean>((resolve) => {
        const socket = net.connect(Number(staging.STAGING_PROVIDER_PORT), '127.0.0.1', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
      if (up) break;
      assert.equal(provider.child.exitCode, null, `staging-provider.mjs exited:\n${provider.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  after(() => {
    for (const child of [provider, ...children]) if (child?.child.exitCode === null) child.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** The page's proxy command, its variables filled from `staging`, the base URL pointed at the test's port. */
  function proxyEnvironment(withCa: boolean, port: number): Record<string, string> {
    const command = block('Then start the proxy as in production', 'sh');
    assert.match(command, /npx obv-link-proxy/);
    const env: Record<string, string> = {};
    for (const [, name = '', value = ''] of command.matchAll(/([A-Z_]+)=(\S+)/g)) {
      env[name] = value.replace(/\$([A-Z_]+)/g, (_, variable: string) => staging[variable as keyof typeof staging] ?? '');
    }
    assert.equal(env.OBV_SANDBOX, undefined, 'the rehearsal runs outside sandbox mode');
    assert.ok(env.NODE_EXTRA_CA_CERTS, 'the command trusts the staging CA');
    env.OBV_BASE_URL = `https://127.0.0.1:${staging.STAGING_PROVIDER_PORT}`;
    env.NODE_EXTRA_CA_CERTS = path.join(dir, env.NODE_EXTRA_CA_CERTS);
    if (!withCa) delete env.NODE_EXTRA_CA_CERTS;
    // The default SQLite storage, in this rehearsal's own directory (never the checkout's ./obv-link-data).
    return { ...env, PORT: String(port), HOST: '127.0.0.1', OBV_DRAIN_WINDOW: '0', OBV_UPSTREAM_TIMEOUT: '3s', OBV_DATA_DIR: path.join(dir, `data-${port}`) };
  }

  test('with NODE_EXTRA_CA_CERTS, the proxy outside sandbox mode gets its token over https and is ready', async () => {
    const port = await freePort();
    const proxy = run(['--import', 'tsx', 'proxy/cli.ts'], ROOT, proxyEnvironment(true, port));
    children.push(proxy);
    await proxy.waitFor(/credentials (accepted|refused|not checked)/);
    assert.match(proxy.output(), /credentials accepted/);
    assert.doesNotMatch(proxy.output(), /sandbox mode/);
    const ready = await fetch(`http://127.0.0.1:${port}/obv/readyz`);
    assert.deepEqual(await ready.json(), { status: 'ready', sessionStore: 'ok', credentials: 'accepted' });
    proxy.child.kill('SIGTERM');
  });

  test('without it, the provider behind the private CA cannot be reached', async () => {
    const port = await freePort();
    const proxy = run(['--import', 'tsx', 'proxy/cli.ts'], ROOT, proxyEnvironment(false, port));
    children.push(proxy);
    await proxy.waitFor(/credentials (accepted|refused|not checked)/);
    assert.match(proxy.output(), /credentials not checked/);
    assert.match(proxy.output(), /could not be reached/);
    proxy.child.kill('SIGTERM');
  });
});
