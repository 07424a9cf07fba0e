// The data directory's disk fills up while the proxy serves checkouts — a REAL small filesystem (a tmpfs,
// test/helpers/small-volume.ts), the proxy started as an operator starts it (proxy/cli.ts), SQLite
// storage — then the space comes back:
// - while full, writes answer 503 storage-full with Retry-After and /readyz is 503 ("full"); the log
//   has one line when writes start failing and one when they are taken again, no line per request, no
//   stack, no 500;
// - once space is freed the proxy serves again by itself (no restart, no operator step);
// - nothing acknowledged is lost: every payment answered 201 and every notification the proxy answered
//   2xx are still there, after the recovery and after a SIGKILL and restart;
// - a proxy started on a full disk says so in one line: the directory, the free bytes, what to do.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startProvider, type ProviderLogger, type RunningProvider } from '../../sandbox/index.ts';
import { ProxyProcess } from '../chaos/cluster.ts';
import { EVENTS_SECRET, startMerchantEndpoint, type MerchantEndpoint } from '../helpers/merchant-endpoint.ts';
import { lookupSession } from '../helpers/session-requests.ts';
import { mountSmallVolume, smallVolumeSkipReason, type SmallVolume } from '../helpers/small-volume.ts';
import {
  checkout,
  finishCheckout,
  readPayment,
  startCheckout,
  type AtTheBank,
  type Checkout,
} from './checkout-flows.ts';

const VOLUME_BYTES = 4 * 1024 * 1024;
const LOG_DIR = 'test-results/disk-full';
/** Bounds of each phase under load (time, and checkouts). */
const PHASE_MS = 30_000;
const MAX_CHECKOUTS = 200;
const WORKERS = 2;
/** How long the disk stays full once the proxy said so. */
const FULL_FOR_MS = 3_000;
const TIMINGS = { retryDelaysMs: [200, 400, 800], attemptTimeoutMs: 2_000, leaseMs: 1_500, pollIntervalMs: 100 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** Every line the proxy's process `name` logged (all of its starts), parsed. */
function logLines(name: string): Record<string, unknown>[] {
  return readdirSync(LOG_DIR)
    .filter((file) => file.startsWith(`${name}.`))
    .flatMap((file) =>
      readFileSync(join(LOG_DIR, file), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => {
          try {
            return JSON.parse(line) as Record<string, unknown>;
          } catch {
            return { msg: line, level: 'stderr' };
          }
        }),
    );
}

describe("the data directory's disk fills under load, then frees", { skip: smallVolumeSkipReason() }, () => {
  let provider: RunningProvider;
  let endpoint: MerchantEndpoint;
  let volume: SmallVolume;
  let proxy: ProxyProcess;
  /** Verifications whose notification the proxy answered 2xx (the provider's log says so). */
  const acknowledgedNotifications = new Set<string>();
  const providerLogger: ProviderLogger = {
    info: (fields, message) => {
      if (message === 'notification delivered')
        acknowledgedNotifications.add((fields as { verificationId: string }).verificationId);
    },
    warn: () => undefined,
    error: () => undefined,
  };

  before(async () => {
    // The provider retries a refused notification for ~16 s: longer than the full phase lasts.
    provider = await startProvider({
      port: 0,
      host: '127.0.0.1',
      logger: providerLogger,
      notificationRetryDelaysMs: [300, 600, 1_000, 2_000, 3_000, 4_000, 5_000],
    });
    endpoint = await startMerchantEndpoint();
    volume = mountSmallVolume(VOLUME_BYTES);
    proxy = new ProxyProcess('disk-full', {
      providerUrl: provider.url,
      keepPort: true,
      logDir: LOG_DIR,
      script: 'test/helpers/events-proxy-child.ts',
      env: {
        OBV_DATA_DIR: join(volume.dir, 'data'),
        // Info: the line that says writes are taken again is an info line.
        OBV_LOG_LEVEL: 'info',
        OBV_GATEWAY_URL: provider.url,
        OBV_PGW_APP_ID: 'sandbox-app',
        OBV_PGW_CLIENT_ID: 'sandbox_client',
        OBV_UPSTREAM_TIMEOUT: '2s',
        OBV_EVENTS_URL: endpoint.url,
        OBV_EVENTS_SECRETS: EVENTS_SECRET,
        TEST_EVENT_TIMINGS: JSON.stringify(TIMINGS),
      },
    });
    await proxy.start();
  });

  after(async () => {
    await proxy?.kill();
    await endpoint?.close();
    await provider?.close();
    volume?.close();
  });

  const readyz = async () => {
    const response = await fetch(`${proxy.url}/obv/readyz`);
    return { status: response.status, body: (await response.json()) as { status: string; sessionStore?: string } };
  };

  /** Checkouts on WORKERS lanes until `stop()` says so (bounded in count and time). */
  function load(results: Checkout[], stop: () => boolean, linkWaitMs: number): Promise<void> {
    let started = 0;
    const deadline = Date.now() + PHASE_MS * 2;
    const lane = async (lane: number) => {
      while (!stop() && started < MAX_CHECKOUTS && Date.now() < deadline) {
        const result = await checkout(proxy.url, `full-${lane}-${Date.now()}-${++started}`, linkWaitMs).catch(
          (error: unknown) => ({
            order: 'unreached',
            refused: { step: `fetch: ${String(error)}`, status: -1 },
          }),
        );
        results.push(result);
        // A client that was refused waits a little before the next checkout (as a page's retry would).
        if (result.refused) await sleep(100);
      }
    };
    return Promise.all(Array.from({ length: WORKERS }, (_, index) => lane(index))).then(() => undefined);
  }

  test('503 storage-full and /readyz 503 while full, one log line each way, serving again by itself, nothing acknowledged lost', async (t) => {
    const results: Checkout[] = [];
    // Before: a few checkouts with room to spare.
    for (let i = 0; i < 3; i++) results.push(await checkout(proxy.url, `before-${i}-${Date.now()}`));
    assert.equal(results.filter((c) => c.paid).length, 3, JSON.stringify(results.map((c) => c.refused)));
    assert.equal((await readyz()).status, 200);
    // Shoppers at the bank when the disk fills: their notifications arrive while it is full.
    const atTheBank: AtTheBank[] = [];
    for (let i = 0; i < 3; i++) {
      const started = await startCheckout(proxy.url, `at-bank-${i}-${Date.now()}`);
      assert.ok('consumerUrl' in started, JSON.stringify(started.refused));
      atTheBank.push(started);
    }

    // Full: whatever the proxy does not already hold is taken by a filler file.
    volume.fill(0);
    let phase: 'full' | 'freed' | 'done' = 'full';
    const loading = load(results, () => phase === 'done', 3_000);
    const fullReadiness = await until(
      '/readyz to say full',
      async () => {
        const ready = await readyz();
        return ready.status === 503 && ready.body.sessionStore === 'full' ? ready.body : undefined;
      },
      PHASE_MS,
    );
    assert.deepEqual(fullReadiness, { status: 'unavailable', sessionStore: 'full', credentials: 'accepted' });
    const storageFull = (c: Checkout) => c.refused?.type === 'urn:obv-link:problem:storage-full';
    await until('a checkout refused 503 storage-full', async () => results.find(storageFull), PHASE_MS);
    // Full for a while under load; the shoppers at the bank sign in: the proxy cannot store their
    // outcomes, refuses the provider's notifications, and the provider retries them.
    const refusedBefore = provider.stats.notificationAttempts - provider.stats.notificationsDelivered;
    const signedIn = atTheBank.map((started) => finishCheckout(proxy.url, started, PHASE_MS));
    await until(
      'a notification refused',
      async () =>
        provider.stats.notificationAttempts - provider.stats.notificationsDelivered > refusedBefore ? true : undefined,
      PHASE_MS,
    );
    await sleep(FULL_FOR_MS);

    // Space comes back: no restart, no operator step but freeing it.
    volume.free();
    phase = 'freed';
    await until('/readyz 200', async () => ((await readyz()).status === 200 ? true : undefined), PHASE_MS);
    phase = 'done';
    await loading;
    // Their notifications, retried by the provider, are stored now, and their orders paid.
    const finished = await Promise.all(signedIn);
    assert.deepEqual(
      finished.map((c) => c.refused),
      finished.map(() => undefined),
      'the shoppers who were at the bank finished',
    );
    results.push(...finished);
    const after: Checkout[] = [];
    for (let i = 0; i < 3; i++) after.push(await checkout(proxy.url, `after-${i}-${Date.now()}`));
    assert.deepEqual(
      after.map((c) => c.refused),
      [undefined, undefined, undefined],
      'serving again',
    );
    results.push(...after);

    const refusals = results.filter((c) => c.refused);
    t.diagnostic(
      `${results.length} checkouts: ${results.filter((c) => c.paid).length} paid, ${refusals.length} refused ` +
        `(${refusals.filter(storageFull).length} storage-full: ${[...new Set(refusals.map((c) => c.refused!.step))].join(', ')})`,
    );
    for (const { refused } of refusals) {
      if (refused!.step === 'notification') continue; // the provider's notification was refused: it retries
      assert.equal(refused!.status, 503, JSON.stringify(refused));
      assert.equal(refused!.type, 'urn:obv-link:problem:storage-full', JSON.stringify(refused));
      assert.equal(refused!.retryAfter, '30');
    }

    // Nothing acknowledged is lost: each payment answered 201, each notification answered 2xx.
    await provider.notificationsSettled();
    const checkAcknowledged = async (when: string) => {
      for (const c of results.filter((r) => r.paid)) {
        const { status, body } = await readPayment(proxy.url, c.order);
        assert.deepEqual(
          [status, body.state, body.transactionId],
          [200, 'completed', c.paid!.transactionId],
          `${when}: ${c.order}`,
        );
      }
      const notified = results.filter(
        (c) => c.verificationId !== undefined && acknowledgedNotifications.has(c.verificationId),
      );
      assert.ok(
        notified.length >= results.filter((c) => c.paid).length,
        `${notified.length} acknowledged notifications`,
      );
      for (const c of notified) {
        const response = await lookupSession(`${proxy.url}/obv`, c.sessionId!, { origin: proxy.url });
        const outcome = ((await response.json()) as { outcome?: { status: string } }).outcome;
        assert.equal(outcome?.status, 'success', `${when}: the outcome of ${c.order}`);
      }
    };
    await checkAcknowledged('after the recovery');

    // The log: a line when writes started failing and one when they were taken again (per episode: a
    // truncated WAL may give a little room back for a moment), never one per request, no stack, no 500.
    const episodes = () => {
      const lines = logLines('disk-full');
      const started = lines.filter((line) => String(line.msg).startsWith('storage is full'));
      const ended = lines.filter((line) => line.msg === 'storage takes writes again');
      return { lines, started, ended };
    };
    // The end is told by the outage log's own write probe, within a second of the space coming back.
    const { lines, started, ended } = await until(
      'the end of the episode in the log',
      async () => {
        const seen = episodes();
        return seen.started.length > 0 && seen.ended.length === seen.started.length ? seen : undefined;
      },
      10_000,
    );
    const refusedRequests = ended.reduce(
      (sum, line) => sum + Number((line.refused as { requests?: number }).requests ?? 0),
      0,
    );
    t.diagnostic(
      `${started.length} episode(s); ${refusedRequests} requests refused; free when it started: ${started.map((line) => line.freeBytes).join(', ')} bytes`,
    );
    assert.ok(refusedRequests >= refusals.filter(storageFull).length, 'every refusal counted');
    assert.ok(
      started.length * 5 <= refusedRequests,
      `far fewer lines (${started.length}) than refusals (${refusedRequests})`,
    );
    for (const line of started) assert.equal(line.location, join(volume.dir, 'data'));
    const loud = lines.filter((line) => Number(line.level) >= 50 || line.level === 'stderr');
    assert.deepEqual(
      loud.filter((line) => !String(line.msg).startsWith('storage is full')).map((line) => line.msg),
      [],
      'no other error line',
    );
    assert.equal(
      lines.some((line) => JSON.stringify(line).includes('"stack"')),
      false,
      'no stack',
    );

    // Whatever process dies next: still there after a SIGKILL and restart.
    await proxy.kill();
    await proxy.start();
    await checkAcknowledged('after a restart');
  });

  test('a proxy started on a full disk says so in one line: the directory, the free bytes, what to do', async () => {
    const dataDir = join(volume.dir, 'fresh');
    volume.fill(0);
    const fresh = new ProxyProcess('full-boot', {
      providerUrl: provider.url,
      logDir: LOG_DIR,
      env: { OBV_DATA_DIR: dataDir },
    });
    try {
      await assert.rejects(fresh.start(), /exited \(1\) while starting/);
    } finally {
      await fresh.kill();
      volume.free();
    }
    const lines = logLines('full-boot').map((line) => String(line.msg));
    assert.deepEqual(
      lines.filter((line) => line.startsWith('OBV_DATA_DIR')),
      [
        `OBV_DATA_DIR ${dataDir}: the disk is full (0 bytes free on its volume). Free space on that volume (or move the directory to a larger one), then start the proxy again; nothing stored so far is lost.`,
      ],
    );
  });
});
