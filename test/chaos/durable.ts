// The chaos run for one durable instance (`npm run chaos -- --durable`): the default deployment — one
// `npm start` process, state in SQLite — taking real checkouts through the sandbox bank (link session,
// start, sign-in, notification with the sandbox's retries, payment with an Idempotency-Key) while the
// process is killed with SIGKILL and started again, twice. Afterwards every order is checked against
// the provider's own record: no order charged twice, every session's outcome kept, every payment the
// proxy answered still on record, every `link.succeeded` delivered to the merchant.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProvider } from '../../sandbox/index.ts';
import { postLinkSession, ProxyProcess } from './cluster.ts';
import { API, payOrder, retrying } from './checkout-steps.ts';
import { lookupSession } from '../helpers/session-requests.ts';
import { EVENTS_SECRET, startMerchantEndpoint } from '../helpers/merchant-endpoint.ts';

export interface DurableChaosOptions {
  orders: number;
  concurrency?: number;
  /** Stop starting new orders after this long (the run is bounded). Default 90 s. */
  timeLimitMs?: number;
  logDir?: string;
  progress?: (line: string) => void;
}

export interface DurableChaosReport {
  orders: number;
  /** Orders whose checkout finished (linked and paid, or paid with a result the merchant reconciled). */
  paid: number;
  /** Orders the provider charged more than once. */
  chargedTwice: number;
  /** Orders the proxy answered 201 for that it no longer has on record, or records differently from the provider. */
  lostPayments: number;
  /** Sessions whose outcome (acknowledged to the provider) was not kept. */
  lostOutcomes: number;
  /** `link.succeeded` events recorded but never delivered. */
  undeliveredEvents: number;
  /** Orders that were `unknown` after a kill during their payment and reconciled from the provider's record. */
  reconciled: number;
  notRun: number;
  kills: number;
  durationMs: number;
  examples: string[];
}

const TIMINGS = {
  retryDelaysMs: [200, 500, 1_000, 2_000, 4_000, 8_000],
  attemptTimeoutMs: 2_000,
  leaseMs: 2_000,
  pollIntervalMs: 100,
};
/** A payment's lease with OBV_UPSTREAM_TIMEOUT=1s: 4 × 1 s + 5 s. */
const PAYMENT_LEASE_MS = 9_000;

export async function runDurableChaos(options: DurableChaosOptions): Promise<DurableChaosReport> {
  const started = Date.now();
  const timeLimitMs = options.timeLimitMs ?? 90_000;
  const examples: string[] = [];
  const example = (line: string) => examples.length < 20 && examples.push(line);
  const dataDir = mkdtempSync(join(tmpdir(), 'obv-chaos-durable-'));
  const provider = await startProvider({
    port: 0,
    host: '127.0.0.1',
    notificationRetryDelaysMs: [200, 500, 1_000, 2_000, 4_000, 8_000],
  });
  const merchant = await startMerchantEndpoint();
  const instance = new ProxyProcess('durable', {
    providerUrl: provider.url,
    keepPort: true,
    logDir: options.logDir ?? 'test-results/chaos-durable',
    script: 'test/helpers/events-proxy-child.ts',
    env: {
      OBV_DATA_DIR: dataDir,
      OBV_GATEWAY_URL: provider.url,
      OBV_UPSTREAM_TIMEOUT: '1s',
      OBV_EVENTS_URL: merchant.url,
      OBV_EVENTS_SECRETS: EVENTS_SECRET,
      TEST_EVENT_TIMINGS: JSON.stringify(TIMINGS),
    },
  });
  let kills = 0;
  const timers: NodeJS.Timeout[] = [];
  try {
    await instance.start();
    options.progress?.(`chaos --durable: one instance on SQLite (${dataDir})`);
    const killAt = new Set([Math.floor(options.orders * 0.3), Math.floor(options.orders * 0.6)]);
    let startedOrders = 0;
    const killAndRestart = () => {
      kills++;
      options.progress?.('chaos --durable: SIGKILL the instance');
      void instance.kill().then(() => {
        timers.push(
          setTimeout(
            () =>
              void instance.start().then(
                () => options.progress?.('chaos --durable: restarted'),
                (e: unknown) => example(`restart failed: ${String(e)}`),
              ),
            500,
          ),
        );
      });
    };

    const answered = new Map<string, string>(); // order → transactionId the proxy answered 201 with
    const linked = new Map<string, string>(); // order → linkRef of its session
    let notRun = 0;
    let next = 0;
    const checkout = async (index: number) => {
      const order = `durable-${started}-${index}`;
      const purchase = {
        merchantUserId: `user-${index}`,
        merchantTransactionId: order,
        amount: '10.00',
        currency: 'USD',
        consumer: { firstName: 'Chaos', lastName: `Shopper ${index}`, email: `s${index}@example.com` },
      };
      const linkToken = await retrying(async () => {
        const made = await postLinkSession(instance.url, purchase, AbortSignal.timeout(5_000));
        return made.status === 201 ? ((await made.json()) as { linkToken: string }).linkToken : undefined;
      });
      if (!linkToken) return example(`${order}: no link session`);
      // One Idempotency-Key for the start, however often it is retried across kills.
      const session = await retrying(async () => {
        const response = await fetch(`${instance.url}/obv/verifications`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: instance.url, 'idempotency-key': `start-${order}` },
          body: JSON.stringify({ linkToken }),
          signal: AbortSignal.timeout(5_000),
        });
        return response.status === 201
          ? ((await response.json()) as { sessionId: string; consumerUrl: string })
          : undefined;
      });
      if (!session) return example(`${order}: could not start`);
      if (killAt.has(++startedOrders)) killAndRestart();
      // The shopper signs in at the bank (the provider is never down); its notification is retried by the provider.
      const url = new URL(session.consumerUrl);
      const form = new URLSearchParams({
        t: url.searchParams.get('t') ?? '',
        username: 'user_good',
        password: 'pass_good',
        action: 'signin',
      });
      const signedIn = await fetch(`${url.origin}${url.pathname}`, { method: 'POST', redirect: 'manual', body: form });
      if (signedIn.status !== 303) return example(`${order}: bank sign-in answered ${signedIn.status}`);
      const linkRef = await retrying(async () => {
        const response = await lookupSession(`${instance.url}/obv`, session.sessionId, { origin: instance.url });
        const body = (await response.json()) as { outcome?: { linkRef?: string } };
        return body.outcome?.linkRef;
      }, 60_000);
      if (!linkRef) return example(`${order}: the outcome was lost`);
      linked.set(order, linkRef);
      const transactionId = await payOrder(() => instance.url, order, linkRef, purchase.merchantUserId);
      if (transactionId && transactionId !== 'unknown') answered.set(order, transactionId);
    };
    const worker = async () => {
      while (next < options.orders) {
        const index = next++;
        if (Date.now() - started > timeLimitMs) {
          notRun++;
          continue;
        }
        await checkout(index);
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
    await retrying(async () => ((await fetch(`${instance.url}/obv/healthz`)).ok ? true : undefined));

    // The books: the provider's own record of charges against the proxy's.
    const charges = new Map<string, string[]>();
    for (const recorded of provider.state.transactions.values()) {
      if (!recorded.merchantTransactionId.startsWith(`durable-${started}-`)) continue;
      charges.set(recorded.merchantTransactionId, [
        ...(charges.get(recorded.merchantTransactionId) ?? []),
        recorded.transactionId,
      ]);
    }
    let chargedTwice = 0;
    let lostPayments = 0;
    let reconciled = 0;
    let paid = 0;
    for (const order of linked.keys()) {
      const charged = charges.get(order) ?? [];
      if (charged.length > 1) {
        chargedTwice++;
        example(`${order}: charged ${charged.length} times`);
      }
      // A payment cut by a kill turns unknown within its lease: wait for it, then reconcile from the provider.
      const record = await retrying(async () => {
        const response = await fetch(`${instance.url}/obv/transactions/${order}`, { headers: API });
        if (response.status === 404)
          return { state: 'none' } as { state: string; paymentId?: string; transactionId?: string };
        const body = (await response.json()) as { state: string; paymentId: string; transactionId?: string };
        return body.state === 'pending' ? undefined : body;
      }, PAYMENT_LEASE_MS + 10_000);
      if (!record) {
        lostPayments++;
        example(`${order}: still pending after its lease`);
        continue;
      }
      if (record.state === 'unknown') {
        const result = charged.length > 0 ? 'paid' : 'not-charged';
        const response = await fetch(`${instance.url}/obv/transactions/${order}/reconcile`, {
          method: 'POST',
          headers: API,
          body: JSON.stringify({
            paymentId: record.paymentId,
            result,
            ...(charged[0] ? { transactionId: charged[0] } : {}),
          }),
        });
        if (response.status === 200) reconciled++;
        else example(`${order}: reconcile answered ${response.status}`);
        if (result === 'paid') paid++;
        continue;
      }
      const answer = answered.get(order);
      if (answer !== undefined && (record.state !== 'completed' || record.transactionId !== answer)) {
        lostPayments++;
        example(`${order}: answered 201 (${answer}) but on record as ${record.state} ${record.transactionId ?? ''}`);
      }
      if (record.state === 'completed' && charged.length === 0) {
        lostPayments++;
        example(`${order}: completed at the proxy, never charged at the provider`);
      }
      if (record.state === 'completed') paid++;
    }
    const lostOutcomes = options.orders - notRun - linked.size;
    // Every link.succeeded recorded reaches the merchant (retried across the kills).
    const deadline = Date.now() + 30_000;
    const delivered = () =>
      new Set(
        merchant.deliveries
          .filter((d) => d.answer === 'ok' && d.event?.type === 'link.succeeded')
          .map((d) => d.event!.data.merchantTransactionId as string),
      );
    while (Date.now() < deadline && [...linked.keys()].some((order) => !delivered().has(order)))
      await new Promise((resolve) => setTimeout(resolve, 200));
    const undeliveredEvents = [...linked.keys()].filter((order) => !delivered().has(order)).length;
    if (undeliveredEvents > 0) example(`${undeliveredEvents} link.succeeded events not delivered`);
    return {
      orders: options.orders,
      paid,
      chargedTwice,
      lostPayments,
      lostOutcomes,
      undeliveredEvents,
      reconciled,
      notRun,
      kills,
      durationMs: Date.now() - started,
      examples,
    };
  } finally {
    for (const timer of timers) clearTimeout(timer);
    await instance.kill();
    await merchant.close();
    await provider.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function durableViolations(report: DurableChaosReport): number {
  return report.chargedTwice + report.lostPayments + report.lostOutcomes + report.undeliveredEvents;
}

export function formatDurableReport(report: DurableChaosReport): string {
  return (
    `${report.orders} orders on one SQLite instance, ${report.kills} SIGKILLs: ${report.paid} paid, ${report.reconciled} reconciled after a kill mid-payment, ` +
    `${report.chargedTwice} charged twice, ${report.lostPayments} payments lost, ${report.lostOutcomes} outcomes lost, ${report.undeliveredEvents} events undelivered` +
    `${report.notRun ? `, ${report.notRun} not run (time limit)` : ''}`
  );
}
