// docs/GOING-TO-PRODUCTION.md's staging rehearsal, run as written: its staging-provider.mjs, started with the
// page's command, serves the sandbox over https with a certificate of a CA made for the test (openssl), and
// its proxy command boots outside sandbox mode against it. With NODE_EXTRA_CA_CERTS naming that CA, the
// boot's token request is accepted and the proxy makes a link session and starts a verification (the command
// carries every variable a production boot needs, the API key and the OBV_PGW_* values among them); without
// it, the proxy cannot reach the provider — which is what the page's section 3 says.
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import http from 'node:http';
import https from 'node:https';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../helpers/free-port.ts';
import { ConfigError, configFromEnv } from '../../../proxy/index.ts';

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
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
  let caPath: string;
  const children: Running[] = [];
  const staging = {
    STAGING_CLIENT_ID: 'staging-client-7c1e',
    STAGING_CLIENT_SECRET: randomBytes(24).toString('base64url'),
    STAGING_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
    STAGING_SEALING_KEYS: `staging-1:${randomBytes(32).toString('base64')}`,
    STAGING_MERCHANT_API_KEY: randomBytes(32).toString('base64'),
    STAGING_PROVIDER_PORT: '',
  };

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'obv-staging-'));
    // A CA of the test's own, and the sandbox's certificate for 127.0.0.1 signed by it.
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca-key.pem',
      '-out',
      'staging-ca.pem',
      '-days',
      '1',
      '-subj',
      '/CN=obv-link staging CA',
    );
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'sandbox-key.pem',
      '-out',
      'sandbox.csr',
      '-subj',
      '/CN=127.0.0.1',
    );
    writeFileSync(path.join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
    openssl(
      'x509',
      '-req',
      '-in',
      'sandbox.csr',
      '-CA',
      'staging-ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-out',
      'sandbox-cert.pem',
      '-days',
      '1',
      '-extfile',
      'san.cnf',
    );

    const script = block('## 4. A staging rehearsal', 'js').replace(
      "from 'obv-link/sandbox'",
      `from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'sandbox/index.ts')).href)}`,
    );
    assert.ok(script.includes('sandbox/index.ts'), 'the script imports obv-link/sandbox');
    writeFileSync(path.join(dir, 'staging-provider.mjs'), script);
    staging.STAGING_PROVIDER_PORT = String(await freePort());
    // The page's command for it: `NODE_EXTRA_CA_CERTS=staging-ca.pem node staging-provider.mjs`, from the
    // script's own folder (its certificate paths are relative); tsx loads the sandbox's TypeScript.
    const command = block('Start it trusting your staging CA too', 'sh').trim();
    const [, caFile] = /^NODE_EXTRA_CA_CERTS=(\S+) node staging-provider\.mjs$/.exec(command) ?? [];
    assert.ok(caFile, `the sandbox script starts trusting the staging CA: ${command}`);
    caPath = path.join(dir, caFile);
    provider = await startStagingProvider(Number(staging.STAGING_PROVIDER_PORT), { NODE_EXTRA_CA_CERTS: caPath });
  });

  /** staging-provider.mjs on `port`, ready once it answers TLS. */
  async function startStagingProvider(port: number, extraEnv: Record<string, string>): Promise<Running> {
    const running = run(['--import', import.meta.resolve('tsx'), 'staging-provider.mjs'], dir, {
      ...staging,
      STAGING_PROVIDER_PORT: String(port),
      ...extraEnv,
    });
    children.push(running);
    for (let i = 0; i < 200; i++) {
      const up = await new Promise<boolean>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
      if (up) break;
      assert.equal(running.child.exitCode, null, `staging-provider.mjs exited:\n${running.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return running;
  }

  after(() => {
    for (const child of [provider, ...children]) if (child?.child.exitCode === null) child.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** The page's proxy command, its variables filled from `staging`, the base URL pointed at the test's port. */
  function proxyEnvironment(
    withCa: boolean,
    port: number,
    providerPort = staging.STAGING_PROVIDER_PORT,
  ): Record<string, string> {
    const command = block('Then start the proxy as in production', 'sh');
    assert.match(command, /npx obv-link-proxy/);
    const env: Record<string, string> = {};
    for (const [, name = '', value = ''] of command.matchAll(/([A-Z_]+)=(\S+)/g)) {
      env[name] = value.replace(
        /\$([A-Z_]+)/g,
        (_, variable: string) => staging[variable as keyof typeof staging] ?? '',
      );
    }
    assert.equal(env.OBV_SANDBOX, undefined, 'the rehearsal runs outside sandbox mode');
    assert.ok(env.NODE_EXTRA_CA_CERTS, 'the command trusts the staging CA');
    env.OBV_BASE_URL = `https://127.0.0.1:${providerPort}`;
    env.NODE_EXTRA_CA_CERTS = path.join(dir, env.NODE_EXTRA_CA_CERTS);
    if (!withCa) delete env.NODE_EXTRA_CA_CERTS;
    // The default SQLite storage, in this rehearsal's own directory (never the checkout's ./obv-link-data).
    return {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      OBV_DRAIN_WINDOW: '0',
      OBV_UPSTREAM_TIMEOUT: '3s',
      OBV_DATA_DIR: path.join(dir, `data-${port}`),
    };
  }

  test('the proxy command sets every variable a production boot needs, the merchant API key and OBV_PGW_* included', () => {
    const env = proxyEnvironment(true, 3000);
    assert.ok(
      env.OBV_MERCHANT_API_KEY,
      'the merchant API key: without it no link session, so no verification, can start',
    );
    try {
      configFromEnv(env);
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      assert.fail(
        `the page's proxy command does not boot: ${error.issues.map((issue) => `${issue.setting}: ${issue.message}`).join('; ')}`,
      );
    }
  });

  test('with NODE_EXTRA_CA_CERTS, the proxy outside sandbox mode gets its token over https, is ready, makes a link session and starts a verification', async () => {
    const port = await freePort();
    const proxy = run(['--import', 'tsx', 'proxy/cli.ts'], ROOT, proxyEnvironment(true, port));
    children.push(proxy);
    await proxy.waitFor(/credentials (accepted|refused|not checked)/);
    assert.match(proxy.output(), /credentials accepted/);
    assert.doesNotMatch(proxy.output(), /sandbox mode/);
    const ready = await fetch(`http://127.0.0.1:${port}/obv/readyz`);
    assert.deepEqual(await ready.json(), { status: 'ready', sessionStore: 'ok', credentials: 'accepted' });
    assert.doesNotMatch(proxy.output(), /no verification can start/);

    // The merchant's server makes a link session with the API key; the checkout (on OBV_PUBLIC_URL's origin) starts with its token.
    const env = proxyEnvironment(true, port);
    const session = await fetch(`http://127.0.0.1:${port}/obv/link-sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.OBV_MERCHANT_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        merchantUserId: 'staging-user',
        merchantTransactionId: 'staging-order-1',
        amount: '12.00',
        currency: 'USD',
        consumer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
      }),
    });
    assert.equal(session.status, 201, await session.clone().text());
    const { linkToken } = (await session.json()) as { linkToken: string };
    const started = await fetch(`http://127.0.0.1:${port}/obv/verifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: new URL(env.OBV_PUBLIC_URL!).origin },
      body: JSON.stringify({ linkToken }),
    });
    assert.equal(started.status, 201, await started.clone().text());
    assert.match(((await started.json()) as { consumerUrl: string }).consumerUrl, /^https:\/\/127\.0\.0\.1:/);
    proxy.child.kill('SIGTERM');
  });

  test('without it, the provider behind the private CA cannot be reached, and the log line says to set NODE_EXTRA_CA_CERTS', async () => {
    const port = await freePort();
    const proxy = run(['--import', 'tsx', 'proxy/cli.ts'], ROOT, proxyEnvironment(false, port));
    children.push(proxy);
    await proxy.waitFor(/credentials (accepted|refused|not checked)/);
    assert.match(proxy.output(), /credentials not checked/);
    assert.match(proxy.output(), /could not be reached/);
    // The proxy's own line names the fix, not only doctor (upstream/tls-trust.ts).
    assert.match(
      proxy.output(),
      /does not trust \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\): start the process with NODE_EXTRA_CA_CERTS=/,
    );
    proxy.child.kill('SIGTERM');
  });

  // The sandbox posts each notification to the proxy's https public URL. Here a TLS front (the staging CA's
  // certificate for 127.0.0.1) passes it to the proxy, as a shop's TLS proxy would. Started with the page's
  // command, the sandbox delivers it; without NODE_EXTRA_CA_CERTS, its logger says the delivery failed.
  for (const withCa of [true, false]) {
    test(`the staging sandbox ${withCa ? 'delivers' : 'cannot deliver'} a notification to the proxy behind TLS ${withCa ? 'with' : 'without'} NODE_EXTRA_CA_CERTS, and its log says so`, async (t) => {
      const ca = readFileSync(caPath);
      const [providerPort, proxyPort] = [await freePort(), await freePort()];
      const sandbox = await startStagingProvider(providerPort, withCa ? { NODE_EXTRA_CA_CERTS: caPath } : {});
      const front = https.createServer(
        {
          key: readFileSync(path.join(dir, 'sandbox-key.pem')),
          cert: readFileSync(path.join(dir, 'sandbox-cert.pem')),
        },
        (req, res) => {
          const upstream = http.request(
            { host: '127.0.0.1', port: proxyPort, path: req.url, method: req.method, headers: req.headers },
            (answer) => {
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              answer.pipe(res);
            },
          );
          upstream.once('error', () => res.destroy());
          req.pipe(upstream);
        },
      );
      front.listen(0, '127.0.0.1');
      await once(front, 'listening');
      t.after(() => front.close());
      const publicUrl = `https://127.0.0.1:${(front.address() as AddressInfo).port}`;
      const env: Record<string, string> = {
        ...proxyEnvironment(true, proxyPort, String(providerPort)),
        OBV_PUBLIC_URL: publicUrl,
      };
      const proxy = run(['--import', 'tsx', 'proxy/cli.ts'], ROOT, env);
      children.push(proxy);
      await proxy.waitFor(/credentials accepted/);

      const api = { authorization: `Bearer ${env.OBV_MERCHANT_API_KEY}`, 'content-type': 'application/json' };
      const session = await fetch(`http://127.0.0.1:${proxyPort}/obv/link-sessions`, {
        method: 'POST',
        headers: api,
        body: JSON.stringify({
          merchantUserId: 'staging-user',
          merchantTransactionId: `staging-order-${proxyPort}`,
          amount: '12.00',
          currency: 'USD',
          consumer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
        }),
      });
      const { linkToken } = (await session.json()) as { linkToken: string };
      const started = await fetch(`http://127.0.0.1:${proxyPort}/obv/verifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: publicUrl },
        body: JSON.stringify({ linkToken }),
      });
      assert.equal(started.status, 201, await started.clone().text());
      const { consumerUrl } = (await started.json()) as { consumerUrl: string };
      // The shopper signs in at the sandbox bank (over https, trusting the staging CA): the sandbox then notifies.
      const bank = new URL(consumerUrl);
      const signedIn = await postForm(
        new URL(bank.pathname, bank.origin),
        new URLSearchParams({
          t: bank.searchParams.get('t') ?? '',
          username: 'user_good',
          password: 'pass_good',
          action: 'signin',
        }),
        ca,
      );
      assert.equal(signedIn, 303, 'the bank accepted the sign-in');
      if (withCa) {
        await sandbox.waitFor(/"message":"notification delivered"/);
        assert.doesNotMatch(sandbox.output(), /notification failed/);
      } else {
        await sandbox.waitFor(/"message":"notification failed"/);
        assert.doesNotMatch(sandbox.output(), /notification delivered/);
      }
      proxy.child.kill('SIGTERM');
      sandbox.child.kill('SIGTERM');
    });
  }
});

/** POSTs `form` to `url` over https trusting `ca`; resolves with the status. */
function postForm(url: URL, form: URLSearchParams, ca: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      url,
      { method: 'POST', ca, headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.once('error', reject);
    request.end(form.toString());
  });
}
