// Production rehearsed from the packed tarball, following docs/GOING-TO-PRODUCTION.md word for word where it
// gives commands: section 4's openssl recipe makes a private CA and a certificate for 127.0.0.1, its
// staging-provider.mjs serves the packed sandbox (`obv-link/sandbox`) over https with this staging's own
// credentials; `npx obv-link-proxy init` with flags only writes .env.production; `doctor` fails naming
// NODE_EXTRA_CA_CERTS without it and passes every check with it; the proxy starts in production mode (no
// OBV_SANDBOX: the bank step bound to the starting browser) from that file; an account is linked at the
// sandbox bank and an order paid over the proxy's HTTP API; the proxy is SIGKILLed and started again: the
// order is still paid and a second payment is refused as already paid.
//
// The TLS in front of the proxy (section 2's nginx) and the merchant's events endpoint are played by this
// process: an https server with the same certificate forwarding to HOST:PORT, and one checking each event's
// signature with the secret init generated. This process trusts the staging CA the way the proxy does with
// NODE_EXTRA_CA_CERTS, by adding it to Node's default CA list (tls.setDefaultCACertificates).
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseEnv } from 'node:util';
import { Webhook } from 'standardwebhooks';
import {
  cleanEnv,
  exec,
  freePort,
  packThisCheckout,
  readmeBlock,
  ROOT,
  runShellBlock,
  tempApp,
  type Child,
  type ShellBlock,
  type TempApp,
} from './temp-apps.ts';

const GUIDE = readFileSync(path.join(ROOT, 'docs/GOING-TO-PRODUCTION.md'), 'utf8');
const IN_SHORT = '## In short: init, doctor, start';
const STAGING = '## 4. A staging rehearsal against the sandbox';

/** Bounds each wait for a process or a state (the whole test runs in about a minute after the install). */
const STEP_MS = 30_000;

/** The first command of a guide's ```sh block (its comment dropped) that `matches` (fails loudly when there is none). */
function commandLine(block: string, matches: (command: string) => boolean): string {
  const line = block
    .split('\n')
    .map((candidate) => candidate.replace(/\s+#.*$/, ''))
    .find(matches);
  assert.ok(line, `the guide's block runs ${String(matches)}:\n${block}`);
  return line;
}
const startsWith = (prefix: string) => (command: string) => command.startsWith(prefix);

/** The fenced sh blocks of the guide's section `heading`, in order. */
function shBlocks(heading: string): string[] {
  const start = GUIDE.indexOf(heading);
  assert.ok(start >= 0, `the guide has "${heading}"`);
  const section = GUIDE.slice(start, GUIDE.indexOf('\n## ', start + heading.length));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map(([, code]) => code!);
}

/** Section 2's TLS proxy, played here: https on `port` with the staging certificate, forwarding to 127.0.0.1:`upstream`. */
function tlsFront(app: TempApp, upstream: () => number): https.Server {
  return https.createServer(
    {
      key: readFileSync(path.join(app.dir, 'sandbox-key.pem')),
      cert: readFileSync(path.join(app.dir, 'sandbox-cert.pem')),
    },
    (req, res) => {
      const forwarded = http.request(
        {
          host: '127.0.0.1',
          port: upstream(),
          method: req.method,
          path: req.url,
          // As the guide's nginx sets them: the original Host, the client's address, the scheme.
          headers: { ...req.headers, 'x-forwarded-for': req.socket.remoteAddress, 'x-forwarded-proto': 'https' },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forwarded.on('error', () => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('bad gateway');
      });
      req.pipe(forwarded);
    },
  );
}

/** SIGKILL to `group`'s whole process group, if it still runs. */
function killGroup(group: ShellBlock): void {
  try {
    process.kill(-group.process.pid!, 'SIGKILL');
  } catch {
    // the group has ended already
  }
}

function listen(server: http.Server | https.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

let packDir: string;
let app: TempApp;
/** Each runs in a process group of its own (bash, npx, node): ended as a group. */
const groups: ShellBlock[] = [];
const servers: (http.Server | https.Server)[] = [];

before(async () => {
  packDir = mkdtempSync(path.join(tmpdir(), 'obv-link-pack-'));
  app = tempApp('production', await packThisCheckout(packDir));
  await app.install([]);
});

after(async () => {
  for (const group of groups) killGroup(group);
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  app?.remove();
  rmSync(packDir, { recursive: true, force: true });
});

test('production rehearsed from the tarball: init, doctor over TLS with a private CA, start, link, pay, SIGKILL, still paid', async (t) => {
  // Section 4: the CA and the sandbox's certificate, made with the guide's openssl commands as written.
  const [certificates, providerCommand] = shBlocks(STAGING);
  assert.ok(certificates && providerCommand, "section 4 has the certificates' and the staging bank's commands");
  assert.match(certificates, /openssl req -x509/);
  await exec('bash', ['-e', '-c', certificates], app.dir, STEP_MS);
  const ca = readFileSync(path.join(app.dir, 'staging-ca.pem'), 'utf8');
  // This process plays the shopper's browser, the TLS proxy and the merchant's server: it trusts the CA too.
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), ca]);

  // The staging bank: the guide's script, started by its command, on a free port through STAGING_PROVIDER_PORT.
  app.write('staging-provider.mjs', readmeBlock(STAGING, 'js', GUIDE));
  const providerLine = commandLine(providerCommand, startsWith('NODE_EXTRA_CA_CERTS='));
  assert.equal(providerLine, 'NODE_EXTRA_CA_CERTS=staging-ca.pem node staging-provider.mjs');
  const providerPort = await freePort();
  const staging = {
    STAGING_CLIENT_ID: 'staging-client-7f3a',
    STAGING_CLIENT_SECRET: 'staging-secret-2b9e41c8d0a54f7e',
    STAGING_WEBHOOK_SECRET: (await exec('bash', ['-c', 'echo "whsec_$(openssl rand -base64 32)"'], app.dir)).trim(),
  };
  const provider = runShellBlock(providerLine, [], {
    cwd: app.dir,
    env: cleanEnv({ ...staging, STAGING_PROVIDER_PORT: String(providerPort) }),
  });
  groups.push(provider);
  const baseUrl = `https://127.0.0.1:${providerPort}`;

  // The TLS proxy in front (section 2) and the merchant's events endpoint, both on the staging certificate.
  let proxyPort = 0;
  const front = tlsFront(app, () => proxyPort);
  servers.push(front);
  const publicUrl = `https://127.0.0.1:${await listen(front)}`;
  const events: { type: string }[] = [];
  let eventsSecret = '';
  const eventsEndpoint = https.createServer(
    {
      key: readFileSync(path.join(app.dir, 'sandbox-key.pem')),
      cert: readFileSync(path.join(app.dir, 'sandbox-cert.pem')),
    },
    (req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        try {
          events.push(
            new Webhook(eventsSecret).verify(body, req.headers as Record<string, string>) as { type: string },
          );
          res.writeHead(204).end();
        } catch {
          res.writeHead(401).end();
        }
      });
    },
  );
  servers.push(eventsEndpoint);
  const eventsUrl = `https://127.0.0.1:${await listen(eventsEndpoint)}/obv-events`;
  await eventuallyAnswers(baseUrl, provider);

  // `npx obv-link-proxy init` with flags only (no terminal: nothing is asked), as the guide's first command.
  const [inShort] = shBlocks(IN_SHORT);
  assert.ok(inShort);
  assert.equal(commandLine(inShort, startsWith('npx obv-link-proxy init')), 'npx obv-link-proxy init');
  const loadEnv = commandLine(inShort, startsWith('set -a'));
  assert.equal(loadEnv, 'set -a; . ./.env.production; set +a');
  const doctorLine = commandLine(inShort, startsWith('npx obv-link-proxy doctor'));
  const startLine = commandLine(inShort, (command) => command === 'npx obv-link-proxy');
  const flags = {
    'base-url': baseUrl,
    'client-id': staging.STAGING_CLIENT_ID,
    'client-secret': staging.STAGING_CLIENT_SECRET,
    'webhook-secret': staging.STAGING_WEBHOOK_SECRET,
    'merchant-id': 'staging-merchant',
    'pgw-app-id': 'staging-app',
    'pgw-client-id': staging.STAGING_CLIENT_ID,
    'public-url': publicUrl,
    'events-url': eventsUrl,
  };
  const init = await exec(
    'npx',
    ['obv-link-proxy', 'init', ...Object.entries(flags).flatMap(([flag, value]) => [`--${flag}`, value])],
    app.dir,
    STEP_MS,
    cleanEnv(),
  );
  assert.match(init, /^init: wrote \S+\.env\.production \(mode 0600\)/m);
  const envFile = path.join(app.dir, '.env.production');
  assert.equal(statSync(envFile).mode & 0o777, 0o600);
  const written = parseEnv(readFileSync(envFile, 'utf8'));
  assert.equal(written.OBV_SANDBOX, undefined, 'production: no sandbox mode');
  assert.equal(written.HOST, '127.0.0.1');
  eventsSecret = written.OBV_EVENTS_SECRETS!;
  assert.match(eventsSecret, /^whsec_/);
  // The one default changed here, as a merchant would in the file's "Safe defaults": a free port for 3000.
  proxyPort = await freePort();
  writeFileSync(envFile, readFileSync(envFile, 'utf8').replace(/^PORT=3000$/m, `PORT=${proxyPort}`));

  // doctor without NODE_EXTRA_CA_CERTS: the provider's TLS fails naming it, exit code 1.
  const doctor = (extra: Record<string, string>) =>
    exec('bash', ['-c', `${loadEnv}; ${doctorLine}; echo "exit $?"`], app.dir, STEP_MS, cleanEnv(extra));
  const untrusted = await doctor({});
  assert.match(untrusted, /^exit 1$/m, untrusted);
  assert.match(
    untrusted,
    /^FAIL provider TLS: .*(SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)/m,
    untrusted,
  );
  assert.match(untrusted, /^ {5}fix: OBV_BASE_URL's certificate .*NODE_EXTRA_CA_CERTS=/m, untrusted);

  // With it (section 3: in the process's environment, not in the file), every check passes on loopback.
  const trusted = await doctor({ NODE_EXTRA_CA_CERTS: 'staging-ca.pem' });
  assert.match(trusted, /^exit 0$/m, trusted);
  const checks = trusted
    .split('\n')
    .filter((line) => /^(ok {2}|FAIL) /.test(line))
    .map((line) => line.slice(5, line.indexOf(':')));
  assert.deepEqual(
    checks,
    ['settings', 'provider TLS', 'credentials', 'public URL', 'events endpoint', 'data directory'],
    trusted,
  );
  assert.doesNotMatch(trusted, /^FAIL/m, trusted);
  assert.match(trusted, /^ok {3}public URL: .* \(answered by doctor on 127\.0\.0\.1:\d+; the proxy is not running\)$/m);
  assert.ok(
    events.some((event) => event.type === 'link.succeeded'),
    "doctor's signed test event arrived and checked",
  );

  // Start, as the guide's third command, trusting the CA; SIGKILL reaches its whole process group (npx and node).
  const boot = (): ShellBlock => {
    const proxy = runShellBlock(`${loadEnv}; exec ${startLine}`, [], {
      cwd: app.dir,
      env: cleanEnv({ NODE_EXTRA_CA_CERTS: 'staging-ca.pem' }),
    });
    groups.push(proxy);
    return proxy;
  };
  const kill = async (proxy: ShellBlock) => {
    killGroup(proxy);
    await proxy.exited();
  };
  let proxy = boot();
  await proxy.waitFor(/obv-link proxy listening/, STEP_MS);
  assert.doesNotMatch(proxy.output(), /sandbox mode/);
  const mount = `${publicUrl}/obv`;
  await eventually(async () => (await fetch(`${mount}/readyz`)).status === 200, 'the proxy is ready', proxy);

  // The merchant's server makes a link session; the shopper's page starts the verification and keeps its cookie.
  const api = { authorization: `Bearer ${written.OBV_MERCHANT_API_KEY}`, 'content-type': 'application/json' };
  const order = `rehearsal-${Date.now()}`;
  const purchase = { merchantUserId: 'shopper-1', merchantTransactionId: order, amount: '31.40', currency: 'USD' };
  const linkSession = await fetch(`${mount}/link-sessions`, {
    method: 'POST',
    headers: api,
    body: JSON.stringify({
      ...purchase,
      consumer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
    }),
  });
  assert.equal(linkSession.status, 201, await linkSession.clone().text());
  const { linkToken } = (await linkSession.json()) as { linkToken: string };
  const started = await fetch(`${mount}/verifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: publicUrl, 'sec-fetch-site': 'same-origin' },
    body: JSON.stringify({ linkToken }),
  });
  assert.equal(started.status, 201, await started.clone().text());
  const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0]!;
  assert.match(cookie, /^obv_bank_step=/, 'production mode binds the bank step to the starting browser');
  const { sessionId, consumerUrl } = (await started.json()) as { sessionId: string; consumerUrl: string };
  assert.ok(consumerUrl.startsWith(`${baseUrl}/`), `the bank page is the staging bank's, over https: ${consumerUrl}`);

  // At the bank (the sandbox's test consumer), then back to the return page in the same browser.
  const bank = new URL(consumerUrl);
  const signedIn = await fetch(`${bank.origin}${bank.pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      t: bank.searchParams.get('t') ?? '',
      username: 'user_good',
      password: 'pass_good',
      action: 'signin',
    }),
    redirect: 'manual',
  });
  assert.equal(signedIn.status, 303);
  const returnUrl = signedIn.headers.get('location')!;
  assert.ok(returnUrl.startsWith(`${publicUrl}/`), `the bank returns to the public URL: ${returnUrl}`);
  // The return page says "Finishing…" until the binding's grace is over (10 s), then the step is complete.
  let linkRef: string | undefined;
  await eventually(
    async () => {
      await (await fetch(returnUrl, { headers: { accept: 'text/html', cookie } })).text();
      const view = (await (
        await fetch(`${mount}/sessions/lookup`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: publicUrl, cookie },
          body: JSON.stringify({ sessionId }),
        })
      ).json()) as { outcome?: { linkRef?: string; status?: string } };
      linkRef = view.outcome?.linkRef;
      return linkRef !== undefined;
    },
    'the linked account is released to the browser that started it',
    proxy,
  );

  // The merchant's server pays the order.
  const pay = () =>
    fetch(`${mount}/transactions`, { method: 'POST', headers: api, body: JSON.stringify({ ...purchase, linkRef }) });
  const paid = await pay();
  assert.equal(paid.status, 201, await paid.clone().text());
  const { transactionId, transactionStatus } = (await paid.json()) as {
    transactionId: string;
    transactionStatus: string;
  };
  assert.equal(transactionStatus, 'APPROVED');

  // SIGKILL, start again from the same file and data directory: still paid, a second payment refused.
  await kill(proxy);
  proxy = boot();
  await proxy.waitFor(/obv-link proxy listening/, STEP_MS);
  const again = await pay();
  assert.equal(again.status, 409, await again.clone().text());
  const refusal = (await again.json()) as { type: string; payment: { transactionId: string } };
  assert.equal(refusal.type, 'urn:obv-link:problem:order-already-paid');
  assert.equal(refusal.payment.transactionId, transactionId);
  const record = (await (await fetch(`${mount}/transactions/${order}`, { headers: api })).json()) as {
    state: string;
    transactionId: string;
  };
  assert.deepEqual([record.state, record.transactionId], ['completed', transactionId]);
  await kill(proxy);
  t.diagnostic(`events received: ${events.map((event) => event.type).join(', ')}`);
});

/** Polls `check` (bounded by STEP_MS), failing with `what` and the process's output. */
async function eventually(check: () => Promise<boolean>, what: string, process_: Child): Promise<void> {
  const deadline = Date.now() + STEP_MS;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (process_.process.exitCode !== null || Date.now() > deadline)
      throw new Error(`${what}: not within ${STEP_MS} ms:\n${process_.output()}`);
    await sleep(200);
  }
}

/** Waits until `url` answers over TLS (any status). */
async function eventuallyAnswers(url: string, process_: Child): Promise<void> {
  await eventually(async () => (await fetch(url, { method: 'HEAD' }), true), `${url} answers`, process_);
}
