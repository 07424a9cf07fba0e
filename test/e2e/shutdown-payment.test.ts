// A deploy's SIGTERM never cuts a payment at the provider: `npm start` (proxy/cli.ts, SQLite in a data
// directory) is sent SIGTERM while endpoint 4 is slowed by the sandbox's delay control to longer than
// OBV_SHUTDOWN_TIMEOUT; the payment still gets its answer (201 to the merchant's server, `completed` on
// record after a restart, one call at the provider), and the process exits 0 once it has.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_WEBHOOK_SECRET, startProvider, type RunningProvider } from '../../sandbox/index.ts';
import { INSTANCE_MERCHANT_API_KEY } from '../chaos/cluster.ts';
import { freePort } from '../helpers/free-port.ts';
import { lookupSession } from '../helpers/session-requests.ts';
import { signInAtBank } from '../node/redis/cluster.ts';
import { eventually } from '../node/redis/support.ts';
import { pay, readPayment, startCheckout } from './checkout-flows.ts';

/** Endpoint 4 answers after this long: longer than OBV_SHUTDOWN_TIMEOUT, shorter than a payment's worst case. */
const PROVIDER_DELAY_MS = 3_000;
const SHUTDOWN_TIMEOUT_MS = 1_000;

let provider: RunningProvider;
const dataDir = mkdtempSync(join(tmpdir(), 'obv-shutdown-'));

before(async () => {
  provider = await startProvider({ port: 0, host: '127.0.0.1' });
});

after(async () => {
  await provider?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** `npm start` on `port`, its stdout collected (the JSON log lines). */
async function startProxy(port: number): Promise<{ child: ChildProcess; url: string; logs: () => string }> {
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'proxy/cli.ts'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      OBV_DATA_DIR: dataDir,
      OBV_BASE_URL: provider.url,
      OBV_GATEWAY_URL: provider.url,
      OBV_PGW_APP_ID: 'sandbox-app',
      OBV_PGW_CLIENT_ID: 'sandbox_client',
      OBV_CLIENT_ID: 'sandbox_client',
      OBV_CLIENT_SECRET: 'sandbox_secret',
      OBV_PUBLIC_URL: url,
      OBV_WEBHOOK_SECRET: DEFAULT_WEBHOOK_SECRET,
      OBV_MERCHANT_ID: 'merchant-shutdown',
      OBV_MERCHANT_API_KEY: INSTANCE_MERCHANT_API_KEY,
      OBV_SANDBOX: 'true',
      OBV_RATE_LIMIT: '0',
      OBV_LOG_LEVEL: 'info',
      OBV_UPSTREAM_TIMEOUT: '5s',
      OBV_SHUTDOWN_TIMEOUT: `${SHUTDOWN_TIMEOUT_MS}ms`,
      OBV_DRAIN_WINDOW: '0',
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}): ${stderr}${stdout}`);
      return (
        (await fetch(`${url}/obv/healthz`).then(
          (r) => r.ok,
          () => false,
        )) || undefined
      );
    }, 90_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${stderr}${stdout}`);
  }
  return { child, url, logs: () => stdout };
}

/** The sandbox's control (`npx obv-link-sandbox delay --endpoint transaction --ms MS`), over HTTP. */
async function delayTransactions(ms: number): Promise<void> {
  const response = await fetch(`${provider.url}/sandbox/controls/delay`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from('sandbox_client:sandbox_secret').toString('base64')}`,
    },
    body: JSON.stringify({ endpoint: 'transaction', ms }),
  });
  assert.equal(response.status, 200);
}

describe('npm start: a SIGTERM during a payment at the provider', () => {
  test("waits for the payment's answer past OBV_SHUTDOWN_TIMEOUT, answers it, records it, then exits 0", async () => {
    const port = await freePort();
    const proxy = await startProxy(port);
    try {
      const order = `shutdown-${Date.now()}`;
      const atBank = await startCheckout(proxy.url, order);
      assert.ok('consumerUrl' in atBank, `the checkout started (${JSON.stringify(atBank.refused)})`);
      await signInAtBank(atBank.consumerUrl);
      const linkRef = await eventually(async () => {
        const response = await lookupSession(`${proxy.url}/obv`, atBank.sessionId, { origin: proxy.url });
        return ((await response.json()) as { outcome?: { linkRef?: string } }).outcome?.linkRef;
      });

      await delayTransactions(PROVIDER_DELAY_MS);
      const charged = provider.stats.transactions;
      const paying = pay(proxy.url, order, linkRef).then(async (response) => ({
        status: response.status,
        body: (await response.json()) as { transactionId?: string },
      }));
      await eventually(async () => (await readPayment(proxy.url, order)).body.state === 'pending' || undefined);
      const exited = once(proxy.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
      const signalledAt = Date.now();
      proxy.child.kill('SIGTERM');

      const answer = await paying;
      assert.equal(answer.status, 201, 'the payment was answered, not cut by the shutdown');
      const [code] = await exited;
      assert.equal(code, 0);
      assert.ok(
        Date.now() - signalledAt > SHUTDOWN_TIMEOUT_MS,
        'the process outlived OBV_SHUTDOWN_TIMEOUT for the payment',
      );
      assert.equal(provider.stats.transactions, charged + 1, 'one call at the provider');
      assert.match(proxy.logs(), /waiting for the payments under way at the provider/);
      assert.doesNotMatch(proxy.logs(), /shutdown time-out/);

      await delayTransactions(0);
      const restarted = await startProxy(port);
      try {
        const { body } = await readPayment(restarted.url, order);
        assert.deepEqual(
          [body.state, body.transactionId],
          ['completed', answer.body.transactionId],
          'recorded before the exit',
        );
      } finally {
        restarted.child.kill('SIGKILL');
        await once(restarted.child, 'exit');
      }
    } finally {
      if (proxy.child.exitCode === null && proxy.child.signalCode === null) proxy.child.kill('SIGKILL');
    }
  });
});
