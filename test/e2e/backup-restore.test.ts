// A backup taken as an operator takes it — `npx obv-link-proxy backup <file>` (proxy/cli.ts) while the
// proxy serves checkouts: links, the provider's notifications, payments — restores as the docs say
// (docs/GOING-TO-PRODUCTION.md "Backup and restore": the file as obv-link.sqlite in a new OBV_DATA_DIR),
// and the proxy started on it knows every order paid before the backup began and refuses to pay one of
// them again, answering with the first payment.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startProvider, type RunningProvider } from '../../sandbox/index.ts';
import { ProxyProcess } from '../chaos/cluster.ts';
import { checkout, pay, readPayment, type Checkout } from './checkout-flows.ts';

/** Checkouts running side by side, and the bound of the whole load (count and time). */
const WORKERS = 3;
const MAX_CHECKOUTS = 60;
const MAX_LOAD_MS = 90_000;
/** Orders paid before the backup is taken. */
const PAID_BEFORE = 6;

let provider: RunningProvider;
const root = mkdtempSync(join(tmpdir(), 'obv-backup-e2e-'));

before(async () => {
  provider = await startProvider({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  await provider?.close();
  rmSync(root, { recursive: true, force: true });
});

function runBackup(dataDir: string, file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'proxy/cli.ts', 'backup', file], {
      env: { PATH: process.env.PATH ?? '', OBV_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a backup taken under load', () => {
  let serving: ProxyProcess;
  let restored: ProxyProcess;
  const dataDir = join(root, 'data');
  const settings = (name: string, dir: string) =>
    new ProxyProcess(name, {
      providerUrl: provider.url,
      logDir: 'test-results/backup-restore',
      env: {
        OBV_DATA_DIR: dir,
        OBV_GATEWAY_URL: provider.url,
        OBV_PGW_APP_ID: 'sandbox-app',
        OBV_PGW_CLIENT_ID: 'sandbox_client',
      },
    });

  before(async () => {
    serving = settings('serving', dataDir);
    await serving.start();
  });
  after(async () => {
    await serving?.kill();
    await restored?.kill();
  });

  test('restores to a data directory that knows every order paid before it and refuses to pay one again', async (t) => {
    const done: Checkout[] = [];
    let started = 0;
    let stop = false;
    const deadline = Date.now() + MAX_LOAD_MS;
    const worker = async () => {
      while (!stop && started < MAX_CHECKOUTS && Date.now() < deadline) {
        done.push(await checkout(serving.url, `backup-${Date.now()}-${++started}`));
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, worker));
    const paid = () => done.filter((c) => c.paid);
    while (paid().length < PAID_BEFORE && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(paid().length >= PAID_BEFORE, `${paid().length} orders paid before the backup`);

    // The backup, while the checkouts go on.
    const paidBefore = paid().map((c) => ({
      order: c.order,
      transactionId: c.paid!.transactionId,
      linkRef: c.linkRef!,
    }));
    const file = join(root, 'obv-link-backup.sqlite');
    const backupStarted = Date.now();
    const backup = await runBackup(dataDir, file);
    const backupEnded = Date.now();
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(
      backup.stdout,
      new RegExp(
        `^backup: wrote ${file} \\(.+, mode 0600\\): a consistent copy of ${join(dataDir, 'obv-link.sqlite')}, checked, in \\d+ ms\\n$`,
      ),
    );
    assert.equal(statSync(file).mode & 0o777, 0o600);
    stop = true;
    await load;
    const answeredDuring = done.filter((c) => c.paid && c.paid.at > backupStarted && c.paid.at < backupEnded).length;
    t.diagnostic(
      `${done.length} checkouts, ${paid().length} paid (${paidBefore.length} before the backup, ${answeredDuring} while it ran)`,
    );
    assert.deepEqual(
      done.filter((c) => c.refused).map((c) => c.refused),
      [],
      'the proxy served every checkout while the backup was taken',
    );

    // Restore as the docs say: the file, as obv-link.sqlite, in a new data directory.
    const restoredDir = join(root, 'restored');
    mkdirSync(restoredDir, { mode: 0o700 });
    copyFileSync(file, join(restoredDir, 'obv-link.sqlite'));
    restored = settings('restored', restoredDir);
    await restored.start();
    for (const { order, transactionId } of paidBefore) {
      const { status, body } = await readPayment(restored.url, order);
      assert.equal(status, 200, order);
      assert.deepEqual([body.state, body.transactionId], ['completed', transactionId], order);
    }
    const charged = provider.stats.transactions;
    const [first] = paidBefore;
    const again = await pay(restored.url, first!.order, first!.linkRef);
    assert.equal(again.status, 409);
    const problem = (await again.json()) as { type: string; payment: { transactionId: string } };
    assert.equal(problem.type, 'urn:obv-link:problem:order-already-paid');
    assert.equal(problem.payment.transactionId, first!.transactionId);
    assert.equal(provider.stats.transactions, charged, 'no second charge');
  });
});
