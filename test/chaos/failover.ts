// The failover rehearsal (`npm run chaos -- --failover postgres|redis`, test/node/postgres/failover.test.ts):
// three `npm start` instances take real checkouts through the sandbox bank (link session, start, sign-in,
// the provider's notification, payment with an Idempotency-Key retried as a merchant's server retries it)
// on a primary that replicates to a standby, reached through a TCP forwarder standing for the name a
// managed database's failover moves. Mid-run the primary is SIGKILLed (its whole process group: a crash,
// not a clean stop), the standby promoted and the forwarder repointed to it. Afterwards every order is
// checked against the provider's own record and the new primary: no order charged twice (a second
// payment attempt with a new key is made for every order, as a shopper's second click would), every
// payment answered 201 still on record, every acknowledged outcome kept, every event delivered or still
// listed (`GET /events?delivery=undelivered`), and the time from the kill to the first write answered.
//
// PostgreSQL: a synchronous standby (`synchronous_standby_names`, `synchronous_commit = on`: a commit is
// acknowledged once the standby has flushed it, which is all promotion needs; `remote_apply` would also
// make reads on the standby current, which the proxy never does, at the cost of waiting for replay).
// Redis: a replica (`replicaof`, asynchronous as Redis replication always is) promoted with `REPLICAOF NO
// ONE`, as Sentinel or a managed service would; both with `appendonly yes`, `appendfsync always`.
import { Redis } from 'ioredis';
import { startProvider } from '../../sandbox/index.ts';
import { postLinkSession, ProxyProcess } from './cluster.ts';
import { API, payOrder, retrying } from './checkout-steps.ts';
import { lookupSession } from '../helpers/session-requests.ts';
import { EVENTS_SECRET, startMerchantEndpoint } from '../helpers/merchant-endpoint.ts';
import { startPostgresServer, startStandby } from '../helpers/postgres-server.ts';
import { startRedisServer } from '../helpers/redis-server.ts';
import { startTcpForwarder } from '../helpers/tcp-forwarder.ts';

export type FailoverEngine = 'postgres' | 'redis';

export interface FailoverOptions {
  engine: FailoverEngine;
  orders: number;
  instances?: number;
  /** Checkouts in flight at once. Default 12. */
  concurrency?: number;
  /** The primary is killed when this share of the orders has started. Default 0.4. */
  failAt?: number;
  /**
   * PostgreSQL only: `asynchronous` replicates without `synchronous_standby_names` and acknowledges at
   * the local flush (`synchronous_commit = local`), to see what a plain streaming replica risks.
   */
  replication?: 'synchronous' | 'asynchronous';
  /**
   * Hold the replication stream this long before the primary is killed, as a standby that falls behind
   * (a congested link, a slow disk): what the primary sent meanwhile never arrives. A synchronous primary then stops acknowledging commits (nothing
   * acknowledged is missing from the standby); an asynchronous one goes on, and loses that much at the
   * failover. Default 0.
   */
  standbyBehindMs?: number;
  /**
   * Redis only: OBV_REDIS_MIN_REPLICAS for the instances (each money write waits for that many replicas,
   * storage/redis/replicas.ts). Default 0, Redis's own behaviour.
   */
  redisMinReplicas?: number;
  /** Stop starting new orders after this long (the run is bounded). Default 90 s. */
  timeLimitMs?: number;
  logDir?: string;
  progress?: (line: string) => void;
}

export interface FailoverReport {
  engine: FailoverEngine;
  replication: string;
  /** How long the replication stream was held before the kill (ms). */
  standbyBehindMs: number;
  orders: number;
  /** Orders whose payment the proxy answered 201. */
  answered: number;
  /** Orders completed on record after the failover (reconciled ones included when they charged). */
  paid: number;
  /** Orders the provider charged more than once. */
  chargedTwice: number;
  /** Orders answered 201 that the new primary no longer has, or has otherwise than answered. */
  lostPayments: number;
  /**
   * Sessions whose outcome never showed although the provider retries its notification until one is
   * acknowledged, or whose outcome (its linkRef read) was gone when the order was paid.
   */
  lostOutcomes: number;
  /** Events neither delivered to the merchant nor listed by `GET /events?delivery=undelivered`. */
  missingEvents: number;
  /** Events delivered (link.succeeded for every linked order, payment.succeeded for every completed one). */
  deliveredEvents: number;
  /** Events not delivered by the end of the wait but still listed as undelivered (nothing lost). */
  listedEvents: number;
  /** Payments cut by the failover that read `unknown` and were reconciled from the provider's record. */
  reconciled: number;
  notRun: number;
  /** Orders whose start never succeeded within 30 s of retries (availability, not loss). */
  notStarted: number;
  /** From the SIGKILL to the promoted server taking writes and the forwarder pointing at it. */
  promotionMs: number;
  /** From the SIGKILL to the first write an instance answered (a new link session, 201). */
  firstWriteMs: number | undefined;
  durationMs: number;
  /** What happened, when (ms from the start). */
  events: string[];
  examples: string[];
}

/** What the run needs of a primary with its standby: a URL through the forwarder, the failover, cleanup. */
interface ReplicatedEngine {
  /** The instances' environment: the forwarder's address. */
  env: Record<string, string>;
  describe: string;
  /** SIGKILL the primary; resolves once it is gone. */
  crash(): Promise<void>;
  /** Promote the standby and move the forwarder to it. */
  promote(): Promise<void>;
  /** The replication stream stops arriving at the standby (a standby falling behind). */
  holdReplication(): void;
  /** Cuts the replication connection: what was held is lost. */
  cutReplication(): void;
  close(): Promise<void>;
}

const EVENT_TIMINGS = {
  retryDelaysMs: [200, 500, 1_000, 2_000, 2_000, 2_000, 2_000, 2_000, 2_000, 2_000],
  attemptTimeoutMs: 2_000,
  leaseMs: 3_000,
  pollIntervalMs: 100,
};
/** A payment's lease with OBV_UPSTREAM_TIMEOUT=1s: 4 × 1 s + 5 s. */
const PAYMENT_LEASE_MS = 9_000;
const EVENTS_WAIT_MS = 30_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function startReplicatedPostgres(replication: 'synchronous' | 'asynchronous'): Promise<ReplicatedEngine> {
  const name = 'obv_standby';
  const primary = await startPostgresServer(
    replication === 'synchronous' ? { synchronousStandby: name } : { settings: { synchronous_commit: 'local' } },
  );
  const cleanup: (() => Promise<void>)[] = [() => primary.close()];
  try {
    // The standby streams through a forwarder of its own: the network between them, which can fall behind.
    const network = await startTcpForwarder(primary.port);
    cleanup.push(() => network.close());
    const standby = await startStandby({ ...primary, port: network.port }, name);
    cleanup.unshift(() => standby.close());
    // The standby must be streaming (and, when asked, the synchronous one) before the load begins.
    const state = await retrying(async () => {
      const row = await primary.sql(`select sync_state from pg_stat_replication where application_name = '${name}'`);
      return row === (replication === 'synchronous' ? 'sync' : 'async') ? row : undefined;
    }, 30_000);
    if (!state) throw new Error(`the standby never streamed as ${replication}`);
    const forwarder = await startTcpForwarder(primary.port);
    cleanup.unshift(() => forwarder.close());
    return {
      holdReplication: () => network.hold(),
      cutReplication: () => network.cut(),
      env: { OBV_DATABASE_URL: `postgres://postgres@127.0.0.1:${forwarder.port}/postgres` },
      describe: `PostgreSQL primary :${primary.port} → ${state} standby :${standby.port}, forwarder :${forwarder.port}`,
      crash: () => primary.stop('SIGKILL'),
      async promote() {
        await standby.promote();
        forwarder.repoint(standby.port);
      },
      close: () => closeAll(cleanup),
    };
  } catch (error) {
    await closeAll(cleanup);
    throw error;
  }
}

/**
 * `replaceReplica`: once promoted, the new primary gets a replica of its own (a fresh server), as Sentinel
 * or a managed service gives one back; without it, instances that wait for a replica
 * (OBV_REDIS_MIN_REPLICAS) could take no money after the failover.
 */
async function startReplicatedRedis(replaceReplica: boolean): Promise<ReplicatedEngine> {
  const primary = await startRedisServer({ persistent: true });
  const cleanup: (() => Promise<void>)[] = [() => primary.close()];
  try {
    const network = await startTcpForwarder(primary.port);
    cleanup.push(() => network.close());
    const replica = await startRedisServer({
      persistent: true,
      args: ['--replicaof', '127.0.0.1', String(network.port)],
    });
    cleanup.unshift(() => replica.close());
    const admin = new Redis(replica.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 1 });
    admin.on('error', () => undefined);
    cleanup.unshift(async () => admin.disconnect());
    await admin.connect();
    const linked = await retrying(async () =>
      (await admin.info('replication')).includes('master_link_status:up') ? true : undefined,
    );
    if (!linked) throw new Error('the replica never linked to its primary');
    const forwarder = await startTcpForwarder(primary.port);
    cleanup.unshift(() => forwarder.close());
    return {
      holdReplication: () => network.hold(),
      cutReplication: () => network.cut(),
      env: { OBV_REDIS_URL: `redis://127.0.0.1:${forwarder.port}` },
      describe: `Redis primary :${primary.port} → replica :${replica.port} (asynchronous), forwarder :${forwarder.port}`,
      crash: () => primary.stop('SIGKILL'),
      async promote() {
        await admin.call('REPLICAOF', 'NO', 'ONE');
        forwarder.repoint(replica.port);
        if (!replaceReplica) return;
        const next = await startRedisServer({
          persistent: true,
          args: ['--replicaof', '127.0.0.1', String(replica.port)],
        });
        cleanup.unshift(() => next.close());
        const up = await retrying(async () =>
          (await admin.info('replication')).includes('connected_slaves:1') ? true : undefined,
        );
        if (!up) throw new Error('the promoted replica never got a replica of its own');
      },
      close: () => closeAll(cleanup),
    };
  } catch (error) {
    await closeAll(cleanup);
    throw error;
  }
}

async function closeAll(cleanup: (() => Promise<void>)[]): Promise<void> {
  for (const step of cleanup) await step().catch(() => undefined);
}

export async function runFailover(options: FailoverOptions): Promise<FailoverReport> {
  const started = Date.now();
  const timeLimitMs = options.timeLimitMs ?? 90_000;
  const waits = options.engine === 'redis' ? (options.redisMinReplicas ?? 0) : 0;
  const replication =
    options.engine === 'redis'
      ? `asynchronous${waits ? `, WAIT ${waits}` : ''}`
      : (options.replication ?? 'synchronous');
  const examples: string[] = [];
  const example = (line: string) => examples.length < 20 && examples.push(line);
  const events: string[] = [];
  const note = (what: string) => {
    events.push(`${Date.now() - started} ms: ${what}`);
    options.progress?.(`failover: ${what}`);
  };
  const engine =
    options.engine === 'postgres'
      ? await startReplicatedPostgres(options.replication ?? 'synchronous')
      : await startReplicatedRedis(waits > 0);
  const cleanup: (() => Promise<void>)[] = [() => engine.close()];
  try {
    note(engine.describe);
    const provider = await startProvider({
      port: 0,
      host: '127.0.0.1',
      notificationRetryDelaysMs: [200, 500, 1_000, 2_000, 4_000, 8_000],
    });
    cleanup.unshift(() => provider.close());
    const merchant = await startMerchantEndpoint();
    cleanup.unshift(() => merchant.close());
    const instances = Array.from(
      { length: options.instances ?? 3 },
      (_, i) =>
        new ProxyProcess(`failover-${i + 1}`, {
          providerUrl: provider.url,
          logDir: options.logDir ?? 'test-results/failover',
          script: 'test/helpers/events-proxy-child.ts',
          env: {
            ...engine.env,
            ...(waits ? { OBV_REDIS_MIN_REPLICAS: String(waits) } : {}),
            OBV_GATEWAY_URL: provider.url,
            OBV_UPSTREAM_TIMEOUT: '1s',
            OBV_EVENTS_URL: merchant.url,
            OBV_EVENTS_SECRETS: EVENTS_SECRET,
            TEST_EVENT_TIMINGS: JSON.stringify(EVENT_TIMINGS),
          },
        }),
    );
    cleanup.unshift(async () => void (await Promise.all(instances.map((instance) => instance.kill()))));
    await Promise.all(instances.map((instance) => instance.start()));
    note(`${instances.length} instances up`);
    let turn = 0;
    /** The merchant's balancer: the next instance, round robin. */
    const next = () => instances[turn++ % instances.length]!.url;

    // The failover, triggered by how many orders have started so that it always hits work in flight.
    const failAt = Math.max(1, Math.floor(options.orders * (options.failAt ?? 0.4)));
    let killedAt: number | undefined;
    let promotionMs = 0;
    let firstWriteMs: number | undefined;
    let failover: Promise<void> | undefined;
    const failNow = () => {
      failover = (async () => {
        if (options.standbyBehindMs) {
          note(`replication held for ${options.standbyBehindMs} ms before the kill`);
          engine.holdReplication();
          await sleep(options.standbyBehindMs);
        }
        note('SIGKILL the primary');
        await engine.crash();
        killedAt = Date.now();
        engine.cutReplication();
        const probe = probeFirstWrite(next).then((at) => {
          firstWriteMs = at === undefined ? undefined : at - killedAt!;
          note(
            at === undefined
              ? 'no write answered within 60 s'
              : `first write answered ${firstWriteMs} ms after the kill`,
          );
        });
        await engine.promote();
        promotionMs = Date.now() - killedAt;
        note(`standby promoted and the forwarder moved, ${promotionMs} ms after the kill`);
        await probe;
      })();
    };

    const answered = new Map<string, string>(); // order → transactionId answered 201
    const linked = new Map<string, string>(); // order → linkRef read back (the outcome was acknowledged)
    let startedOrders = 0;
    let notRun = 0;
    let notStarted = 0;
    let lostOutcomes = 0;
    let nextOrder = 0;
    const orderId = (index: number) => `failover-${started}-${index}`;
    const checkout = async (index: number) => {
      const order = orderId(index);
      const purchase = {
        merchantUserId: `user-${index}`,
        merchantTransactionId: order,
        amount: '10.00',
        currency: 'USD',
        consumer: { firstName: 'Failover', lastName: `Shopper ${index}`, email: `s${index}@example.com` },
      };
      // The merchant's server makes the link session; the browser starts with an Idempotency-Key. A start
      // cut by the failover may leave its key claimed (409: retry with a new key, as the answer says) or
      // its link token used (409 link-token-used: the server makes another link session); a key whose
      // start keeps failing for 5 s is given up for a new one, as the element does after its time-out.
      let linkToken: string | undefined;
      let key = `start-${order}`;
      let keySince = Date.now();
      const newKey = () => {
        key = `start-${order}-${Math.random().toString(36).slice(2)}`;
        keySince = Date.now();
      };
      let lastAnswer = 'no answer';
      const session = await retrying(async () => {
        const url = next();
        if (!linkToken) {
          const made = await postLinkSession(url, purchase, AbortSignal.timeout(5_000));
          if (made.status !== 201) {
            lastAnswer = `link session ${made.status}`;
            return void (await made.body?.cancel());
          }
          linkToken = ((await made.json()) as { linkToken: string }).linkToken;
        }
        const response = await fetch(`${url}/obv/verifications`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: url, 'idempotency-key': key },
          body: JSON.stringify({ linkToken }),
          signal: AbortSignal.timeout(5_000),
        }).catch((error: unknown) => {
          // No answer in time: the first request may sit on a claim that frees only after its lease.
          if (Date.now() - keySince > 5_000) newKey();
          throw error;
        });
        if (response.status === 201) return (await response.json()) as { sessionId: string; consumerUrl: string };
        const text = await response.text();
        lastAnswer = `start ${response.status} ${text.slice(0, 200)}`;
        if ((response.status === 409 && text.includes('link-token-used')) || response.status === 404)
          linkToken = undefined;
        else if (response.status === 409 || Date.now() - keySince > 5_000) newKey();
        return undefined;
      });
      if (!session) {
        notStarted++;
        return example(`${order}: could not start (last: ${lastAnswer})`);
      }
      if (++startedOrders === failAt) failNow();
      const consumer = new URL(session.consumerUrl);
      const form = new URLSearchParams({
        t: consumer.searchParams.get('t') ?? '',
        username: 'user_good',
        password: 'pass_good',
        action: 'signin',
      });
      const signedIn = await retrying(() =>
        fetch(`${consumer.origin}${consumer.pathname}`, { method: 'POST', redirect: 'manual', body: form }),
      );
      if (!signedIn) return example(`${order}: the bank never answered the sign-in`);
      if (signedIn.status !== 303) return example(`${order}: bank sign-in answered ${signedIn.status}`);
      const linkRef = await retrying(async () => {
        const url = next();
        const response = await lookupSession(`${url}/obv`, session.sessionId, { origin: url });
        const body = (await response.json()) as { outcome?: { linkRef?: string } };
        return body.outcome?.linkRef;
      }, 60_000);
      if (!linkRef) {
        // The provider retries its notification until one is acknowledged: none showing means it was lost.
        lostOutcomes++;
        return example(`${order}: no outcome within 60 s`);
      }
      linked.set(order, linkRef);
      const transactionId = await payOrder(next, order, linkRef, purchase.merchantUserId);
      if (transactionId && transactionId !== 'unknown') answered.set(order, transactionId);
    };
    const worker = async () => {
      while (nextOrder < options.orders) {
        const index = nextOrder++;
        if (Date.now() - started > timeLimitMs) {
          notRun++;
          continue;
        }
        await checkout(index);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 12) }, worker));
    if (!failover) failNow();
    await failover;
    note(`${options.orders - notRun} orders run, ${answered.size} payments answered 201`);

    // The books: the provider's own record of charges against what the new primary holds.
    const charges = new Map<string, string[]>();
    for (const recorded of provider.state.transactions.values()) {
      if (!recorded.merchantTransactionId.startsWith(`failover-${started}-`)) continue;
      charges.set(recorded.merchantTransactionId, [
        ...(charges.get(recorded.merchantTransactionId) ?? []),
        recorded.transactionId,
      ]);
    }
    let lostPayments = 0;
    let reconciled = 0;
    let paid = 0;
    const completed = new Set<string>();
    for (const [order, linkRef] of linked) {
      const charged = charges.get(order) ?? [];
      // What the merchant's server (or a shopper's second click) sends after the failover: a new key.
      const again = await retrying(async () => {
        const response = await fetch(`${next()}/obv/transactions`, {
          method: 'POST',
          headers: { ...API, 'idempotency-key': `pay-again-${order}` },
          body: JSON.stringify({
            linkRef,
            merchantUserId: order.replace(/^failover-\d+-/, 'user-'),
            merchantTransactionId: order,
            amount: '10.00',
            currency: 'USD',
          }),
          signal: AbortSignal.timeout(5_000),
        });
        await response.body?.cancel();
        return response.status >= 500 ? undefined : response.status;
      });
      if (again === 201 && answered.has(order)) example(`${order}: paid again after the failover`);
      const record = await retrying(async () => {
        const response = await fetch(`${next()}/obv/transactions/${order}`, { headers: API });
        if (response.status === 404) {
          await response.body?.cancel();
          return { state: 'none' } as { state: string; paymentId?: string; transactionId?: string };
        }
        if (response.status !== 200) {
          await response.body?.cancel();
          return undefined;
        }
        const body = (await response.json()) as { state: string; paymentId: string; transactionId?: string };
        return body.state === 'pending' ? undefined : body;
      }, PAYMENT_LEASE_MS + 10_000);
      if (!record) {
        lostPayments++;
        example(`${order}: still pending after its lease`);
        continue;
      }
      if (record.state === 'unknown') {
        const result = (charges.get(order) ?? charged).length > 0 ? 'paid' : 'not-charged';
        const status = await retrying(async () => {
          const response = await fetch(`${next()}/obv/transactions/${order}/reconcile`, {
            method: 'POST',
            headers: API,
            body: JSON.stringify({
              paymentId: record.paymentId,
              result,
              ...(charged[0] ? { transactionId: charged[0] } : {}),
            }),
          });
          await response.body?.cancel();
          return response.status >= 500 ? undefined : response.status;
        });
        if (status === 200) reconciled++;
        else example(`${order}: reconcile answered ${status ?? 'nothing'}`);
        if (result === 'paid') paid++;
        // Reconciled as not charged: the order may be paid again, and the merchant does. Its outcome was
        // not lost (its link reference still pays), so it is completed once this one is answered.
        else if (status === 200) {
          const user = order.replace(/^failover-\d+-/, 'user-');
          const transactionId = await payOrder(next, order, linkRef, user, `pay-after-reconcile-${order}`);
          if (transactionId && transactionId !== 'unknown') {
            paid++;
            completed.add(order);
          } else example(`${order}: reconciled as not charged, then not payable again`);
        }
        continue;
      }
      const answer = answered.get(order);
      if (answer !== undefined && (record.state !== 'completed' || record.transactionId !== answer)) {
        lostPayments++;
        example(`${order}: answered 201 (${answer}) but on record as ${record.state} ${record.transactionId ?? ''}`);
      }
      if (record.state === 'completed') {
        paid++;
        completed.add(order);
      }
    }
    // Charges counted after the second attempts: an order the failover forgot would be charged again.
    let chargedTwice = 0;
    const chargesAfter = new Map<string, number>();
    for (const recorded of provider.state.transactions.values())
      if (recorded.merchantTransactionId.startsWith(`failover-${started}-`))
        chargesAfter.set(recorded.merchantTransactionId, (chargesAfter.get(recorded.merchantTransactionId) ?? 0) + 1);
    for (const [order, count] of chargesAfter) {
      if (count > 1) {
        chargedTwice++;
        example(`${order}: charged ${count} times`);
      }
    }
    // An outcome acknowledged before the kill and gone after it: the session no longer knows its linkRef.
    for (const order of linked.keys()) {
      if (!completed.has(order) && !answered.has(order) && (chargesAfter.get(order) ?? 0) === 0) lostOutcomes++;
    }

    // Every event the run expects: link.succeeded per linked order, payment.succeeded per completed one.
    const expected = [
      ...[...linked.keys()].map((order) => `link.succeeded ${order}`),
      ...[...completed].map((order) => `payment.succeeded ${order}`),
    ];
    const delivered = () =>
      new Set(
        merchant.deliveries
          .filter((d) => d.answer === 'ok' && d.event)
          .map((d) => `${d.event!.type} ${String(d.event!.data.merchantTransactionId)}`),
      );
    const deadline = Date.now() + EVENTS_WAIT_MS;
    while (Date.now() < deadline && expected.some((key) => !delivered().has(key))) await sleep(200);
    const seen = delivered();
    const undelivered = expected.filter((key) => !seen.has(key));
    const listed = undelivered.length ? await listUndelivered(next) : new Set<string>();
    const missing = undelivered.filter((key) => !listed.has(key));
    for (const key of missing.slice(0, 5)) example(`event ${key}: neither delivered nor listed`);
    return {
      engine: options.engine,
      replication,
      standbyBehindMs: options.standbyBehindMs ?? 0,
      orders: options.orders,
      answered: answered.size,
      paid,
      chargedTwice,
      lostPayments,
      lostOutcomes,
      missingEvents: missing.length,
      deliveredEvents: expected.length - undelivered.length,
      listedEvents: undelivered.length - missing.length,
      reconciled,
      notRun,
      notStarted,
      promotionMs,
      firstWriteMs,
      durationMs: Date.now() - started,
      events,
      examples,
    };
  } finally {
    await closeAll(cleanup);
  }
}

/** Polls a write (a new link session) from the kill on; resolves to the time of the first 201, bounded. */
async function probeFirstWrite(next: () => string): Promise<number | undefined> {
  const deadline = Date.now() + 60_000;
  for (let probe = 0; Date.now() < deadline; probe++) {
    const ok = await postLinkSession(
      next(),
      {
        merchantUserId: 'probe',
        merchantTransactionId: `probe-${Date.now()}-${probe}`,
        amount: '1.00',
        currency: 'USD',
        consumer: { firstName: 'Probe', lastName: 'Write', email: 'probe@example.com' },
      },
      AbortSignal.timeout(2_000),
    ).then(
      async (response) => {
        await response.body?.cancel();
        return response.status === 201;
      },
      () => false,
    );
    if (ok) return Date.now();
    await sleep(50);
  }
  return undefined;
}

/** `type order` of every event `GET /events?delivery=undelivered` still lists (pages followed, bounded). */
async function listUndelivered(next: () => string): Promise<Set<string>> {
  const keys = new Set<string>();
  let after: string | undefined;
  for (let page = 0; page < 100; page++) {
    const query = new URLSearchParams({ delivery: 'undelivered', ...(after ? { after } : {}) });
    const body = await retrying(async () => {
      const response = await fetch(`${next()}/obv/events?${query}`, { headers: API });
      if (response.status !== 200) {
        await response.body?.cancel();
        return undefined;
      }
      return (await response.json()) as {
        events: { id: string; type: string; data: Record<string, unknown> }[];
        hasMore: boolean;
      };
    });
    if (!body) break;
    for (const event of body.events) keys.add(`${event.type} ${String(event.data.merchantTransactionId)}`);
    if (!body.hasMore || body.events.length === 0) break;
    after = body.events.at(-1)!.id;
  }
  return keys;
}

export function failoverViolations(report: FailoverReport): number {
  return report.chargedTwice + report.lostPayments + report.lostOutcomes + report.missingEvents + report.notRun;
}

export function formatFailoverReport(report: FailoverReport): string {
  const write = report.firstWriteMs === undefined ? 'no write within 60 s' : `first write ${report.firstWriteMs} ms`;
  return (
    `${report.orders} orders on 3 instances, ${report.engine} (${report.replication} replica` +
    `${report.standbyBehindMs ? `, ${report.standbyBehindMs} ms behind at the kill` : ''}) failed over: ` +
    `${report.answered} payments answered, ${report.paid} paid, ${report.reconciled} reconciled, ` +
    `${report.chargedTwice} charged twice, ${report.lostPayments} acknowledged payments lost, ${report.lostOutcomes} outcomes lost, ` +
    `events ${report.deliveredEvents} delivered + ${report.listedEvents} listed, ${report.missingEvents} missing; ` +
    `promotion ${report.promotionMs} ms, ${write} after the kill` +
    `${report.notStarted ? `, ${report.notStarted} never started` : ''}` +
    `${report.notRun ? `, ${report.notRun} not run (time limit)` : ''}`
  );
}
