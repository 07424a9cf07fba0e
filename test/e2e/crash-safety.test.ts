// Nothing acknowledged is lost and no order is paid twice, whatever process dies: the proxy runs as an
// operator runs it (proxy/cli.ts, configured by environment) on its durable storage — SQLite in a data
// directory (the default: one instance), PostgreSQL and Redis — and is killed with SIGKILL at each step
// that matters, then started again: after a payment, while a payment is at the provider, while a shopper
// is at the bank (a notification arriving after the restart), right after a burst of notifications was
// acknowledged, and while a merchant event waits for delivery. On PostgreSQL the database server itself is SIGKILLed too, after a payment.
// PostgreSQL runs only where it is installed (postgres-server.ts: skipped loudly, required with CI=true).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startProvider, type RunningProvider } from '../../sandbox/index.ts';
import { INSTANCE_MERCHANT_API_KEY, postLinkSession, ProxyProcess } from '../chaos/cluster.ts';
import { CHECKOUT, signInAtBank } from '../node/redis/cluster.ts';
import { lookupSession } from '../helpers/session-requests.ts';
import { eventually } from '../node/redis/support.ts';
import { EVENTS_SECRET, startMerchantEndpoint, type MerchantEndpoint } from '../helpers/merchant-endpoint.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { postgresSkipReason, startPostgresServer, type PostgresServer } from '../helpers/postgres-server.ts';
import { checkout } from './checkout-flows.ts';

/** What the checkout page reads of its session (POST /sessions/lookup). */
async function readSession(proxy: { url: string }, sessionId: string): Promise<{ body: Record<string, unknown> }> {
  const response = await lookupSession(`${proxy.url}/obv`, sessionId, { origin: proxy.url });
  return { body: (await response.json()) as Record<string, unknown> };
}

const API = { authorization: `Bearer ${INSTANCE_MERCHANT_API_KEY}` };
/** Short upstream time-out: a payment's lease is 4 × 1 s + 5 s. */
const UPSTREAM_TIMEOUT_S = 1;
const TIMINGS = { retryDelaysMs: [200, 400, 800, 1_600], attemptTimeoutMs: 2_000, leaseMs: 1_500, pollIntervalMs: 100 };

interface Backend {
  name: string;
  env(): Record<string, string>;
  redisUrl?(): string;
  /** PostgreSQL only: its server, which a test kills too. */
  postgres?(): PostgresServer;
  /** Everything the backend holds on disk or in memory, as text (for the scan for credentials). */
  dump(): Promise<string>;
}

let provider: RunningProvider;
let endpoint: MerchantEndpoint;
let redis: RedisServer;
let postgres: PostgresServer | undefined;
const withPostgres = !postgresSkipReason();
const dataDir = mkdtempSync(join(tmpdir(), 'obv-crash-'));

before(async () => {
  provider = await startProvider({ port: 0, host: '127.0.0.1' });
  endpoint = await startMerchantEndpoint();
  redis = await startRedisServer();
  if (withPostgres) postgres = await startPostgresServer();
});

after(async () => {
  await endpoint?.close();
  await provider?.close();
  await redis?.close();
  await postgres?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const backends: Backend[] = [
  {
    name: 'SQLite (the default)',
    env: () => ({ OBV_DATA_DIR: dataDir }),
    async dump() {
      return readdirSync(dataDir)
        .map((file) => readFileSync(join(dataDir, file)).toString('latin1'))
        .join('\n');
    },
  },
  ...(withPostgres
    ? [
        {
          name: 'PostgreSQL',
          env: () => ({ OBV_DATABASE_URL: postgres!.url, OBV_DATABASE_SCHEMA: 'crash' }),
          postgres: () => postgres!,
          async dump() {
            const tables = (
              await postgres!.sql("SELECT table_name FROM information_schema.tables WHERE table_schema = 'crash'")
            )
              .split('\n')
              .filter(Boolean);
            const rows = await Promise.all(
              tables.map((table) => postgres!.sql(`SELECT t::text FROM crash.${table} AS t`)),
            );
            return rows.join('\n');
          },
        },
      ]
    : []),
  {
    name: 'Redis',
    env: () => ({ OBV_REDIS_PREFIX: 'crash:' }),
    redisUrl: () => redis.url,
    async dump() {
      const { Redis } = await import('ioredis');
      const client = new Redis(redis.url);
      try {
        const keys = await client.keys('crash:*');
        const values = await Promise.all(keys.map(async (key) => `${key} ${JSON.stringify(await client.dump(key))}`));
        return values.join('\n');
      } finally {
        client.disconnect();
      }
    },
  },
];

for (const backend of backends) {
  describe(`crash safety on ${backend.name}`, () => {
    let proxy: ProxyProcess;
    let orders = 0;
    const seen: string[] = [];

    before(async () => {
      proxy = new ProxyProcess(`crash-${backend.name.split(' ')[0]!.toLowerCase()}`, {
        providerUrl: provider.url,
        ...(backend.redisUrl ? { redisUrl: backend.redisUrl() } : {}),
        keepPort: true,
        logDir: 'test-results/crash-safety',
        script: 'test/helpers/events-proxy-child.ts',
        env: {
          ...backend.env(),
          OBV_GATEWAY_URL: provider.url,
          OBV_PGW_APP_ID: 'sandbox-app',
          OBV_PGW_CLIENT_ID: 'sandbox_client',
          OBV_UPSTREAM_TIMEOUT: `${UPSTREAM_TIMEOUT_S}s`,
          OBV_EVENTS_URL: endpoint.url,
          OBV_EVENTS_SECRETS: EVENTS_SECRET,
          TEST_EVENT_TIMINGS: JSON.stringify(TIMINGS),
        },
      });
      await proxy.start();
    });

    after(async () => {
      await proxy.kill();
    });

    const restart = async () => {
      await proxy.kill();
      await proxy.start();
    };

    /** A link session for a new order, started, and the bank step done: its link reference. */
    async function linkedOrder(): Promise<{ order: string; sessionId: string; linkRef: string }> {
      const order = `crash-${backend.name[0]}-${Date.now()}-${++orders}`;
      const { sessionId, consumerUrl } = await startFor(order);
      await signInAtBank(consumerUrl);
      const linkRef = await eventually(async () => {
        const { body } = await readSession(proxy, sessionId);
        return (body.outcome as { linkRef?: string } | undefined)?.linkRef;
      });
      seen.push(linkRef);
      return { order, sessionId, linkRef };
    }

    async function startFor(order: string): Promise<{ sessionId: string; consumerUrl: string }> {
      const made = await postLinkSession(proxy.url, { ...CHECKOUT, merchantTransactionId: order });
      assert.equal(made.status, 201);
      const { linkToken } = (await made.json()) as { linkToken: string };
      seen.push(linkToken);
      const started = await fetch(`${proxy.url}/obv/verifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: proxy.url },
        body: JSON.stringify({ linkToken }),
      });
      assert.equal(started.status, 201);
      return (await started.json()) as { sessionId: string; consumerUrl: string };
    }

    const pay = (order: string, linkRef: string, signal?: AbortSignal) =>
      fetch(`${proxy.url}/obv/transactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...API },
        body: JSON.stringify({
          linkRef,
          merchantUserId: CHECKOUT.merchantUserId,
          merchantTransactionId: order,
          amount: CHECKOUT.amount,
          currency: CHECKOUT.currency,
        }),
        ...(signal ? { signal } : {}),
      });
    const readPayment = async (order: string) => {
      const response = await fetch(`${proxy.url}/obv/transactions/${order}`, { headers: API });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };

    test('an order paid before a SIGKILL is refused after the restart, with the first payment', async () => {
      const { order, linkRef } = await linkedOrder();
      const paid = await pay(order, linkRef);
      assert.equal(paid.status, 201);
      const first = (await paid.json()) as { transactionId: string };
      await restart();
      assert.equal((await readPayment(order)).body.transactionId, first.transactionId);
      // A new link session for the same order, linked and paid again: refused, no second charge.
      const charged = provider.stats.transactions;
      const made = await postLinkSession(proxy.url, { ...CHECKOUT, merchantTransactionId: order });
      assert.equal(made.status, 201);
      const { linkToken } = (await made.json()) as { linkToken: string };
      const restarted = await fetch(`${proxy.url}/obv/verifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: proxy.url },
        body: JSON.stringify({ linkToken }),
      });
      assert.equal(restarted.status, 409, 'the link token of a paid order starts nothing');
      const again = await pay(order, linkRef);
      assert.equal(again.status, 409);
      const problem = (await again.json()) as { type: string; payment: { transactionId: string } };
      assert.match(problem.type, /order-already-paid/);
      assert.equal(problem.payment.transactionId, first.transactionId);
      assert.equal(provider.stats.transactions, charged, 'no second endpoint-4 call');
    });

    test('a payment cut by SIGKILL at the provider reads unknown within its lease, is told, and is never sent again', async () => {
      const { order, linkRef } = await linkedOrder();
      provider.faults.transactionDelayMs = 700;
      const charged = provider.stats.transactions;
      const cut = pay(order, linkRef).catch(() => undefined);
      await eventually(async () => (await readPayment(order)).body.state === 'pending' || undefined);
      await proxy.kill();
      await cut;
      provider.faults.transactionDelayMs = 0;
      // The provider charged it after all (its answer never reached the proxy).
      await eventually(() => provider.stats.transactions > charged || undefined);
      await proxy.start();
      const lease = (4 * UPSTREAM_TIMEOUT_S + 5) * 1_000;
      const since = Date.now();
      const unknown = await eventually(async () => {
        const { body } = await readPayment(order);
        return body.state === 'unknown' ? body : undefined;
      }, lease + 5_000);
      assert.ok(Date.now() - since <= lease + 5_000);
      const told = await eventually(
        () =>
          endpoint.events.find(
            (event) => event.type === 'payment.unknown' && event.data.merchantTransactionId === order,
          ),
        15_000,
      );
      assert.equal(told.data.paymentId, unknown.paymentId);
      const retried = await pay(order, linkRef);
      assert.equal(retried.status, 409);
      assert.equal(provider.stats.transactions, charged + 1, 'no retry calls endpoint 4 again');
      // The merchant checked with the provider: it did charge. The order is closed with that payment.
      const reconciled = await fetch(`${proxy.url}/obv/transactions/${order}/reconcile`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...API },
        body: JSON.stringify({ paymentId: unknown.paymentId, result: 'paid' }),
      });
      assert.equal(reconciled.status, 200);
      assert.deepEqual(await reconciled.json(), {
        merchantTransactionId: order,
        paymentId: unknown.paymentId,
        result: 'paid',
        payable: false,
      });
      assert.equal((await readPayment(order)).body.state, 'completed');
      assert.equal((await pay(order, linkRef)).status, 409);
      assert.equal(provider.stats.transactions, charged + 1);
    });

    test('a shopper at the bank during a SIGKILL finishes after the restart; the event recorded before a kill is delivered after it', async () => {
      const order = `crash-bank-${backend.name[0]}-${Date.now()}`;
      const { sessionId, consumerUrl } = await startFor(order);
      await restart();
      endpoint.answer = () => 'fail';
      await signInAtBank(consumerUrl);
      const linkRef = await eventually(
        async () => ((await readSession(proxy, sessionId)).body.outcome as { linkRef?: string } | undefined)?.linkRef,
      );
      seen.push(linkRef);
      // The link.succeeded event is recorded, its delivery failing: kill the proxy, then let the merchant answer.
      await eventually(() =>
        endpoint.deliveries.find(
          (d) => d.event?.type === 'link.succeeded' && d.event.data.merchantTransactionId === order,
        ),
      );
      await proxy.kill();
      endpoint.answer = () => 'ok';
      await proxy.start();
      const delivered = await eventually(
        () =>
          endpoint.deliveries.find(
            (d) =>
              d.answer === 'ok' && d.event?.type === 'link.succeeded' && d.event.data.merchantTransactionId === order,
          ),
        20_000,
      );
      assert.equal(delivered.event!.data.linkRef, linkRef);
    });

    test('notifications acknowledged together (on SQLite one commit) all survive a SIGKILL right after their 2xx', async () => {
      const orders = Array.from({ length: 12 }, (_, index) => `crash-burst-${backend.name[0]}-${Date.now()}-${index}`);
      const started = await Promise.all(orders.map((order) => startFor(order)));
      const acknowledged = provider.stats.notificationsDelivered;
      await Promise.all(started.map(({ consumerUrl }) => signInAtBank(consumerUrl)));
      // Killed as soon as the provider has its last 2xx: no read in between gives the writes more time.
      await eventually(
        () => provider.stats.notificationsDelivered >= acknowledged + orders.length || undefined,
        10_000,
      );
      await proxy.kill();
      const attempts = provider.stats.notificationAttempts;
      await proxy.start();
      for (const { sessionId } of started) {
        const outcome = (await readSession(proxy, sessionId)).body.outcome as { linkRef?: string } | undefined;
        assert.ok(outcome?.linkRef, `session ${sessionId}: its acknowledged outcome, read at once after the restart`);
        seen.push(outcome.linkRef);
      }
      assert.equal(provider.stats.notificationAttempts, attempts, 'none was sent again');
    });

    if (backend.postgres) {
      test('an order paid before PostgreSQL itself is SIGKILLed is refused after its restart, with the first payment', async () => {
        const server = backend.postgres!();
        const { order, linkRef } = await linkedOrder();
        const paid = await pay(order, linkRef);
        assert.equal(paid.status, 201);
        const first = (await paid.json()) as { transactionId: string };
        await server.stop('SIGKILL');
        try {
          assert.equal((await readPayment(order)).status, 503, 'no answer from memory while the database is down');
        } finally {
          await server.start();
        }
        const charged = provider.stats.transactions;
        const again = await eventually(async () => {
          const response = await pay(order, linkRef);
          return response.status === 503 ? undefined : response;
        }, 20_000);
        assert.equal(again.status, 409);
        assert.equal(
          ((await again.json()) as { payment: { transactionId: string } }).payment.transactionId,
          first.transactionId,
        );
        assert.equal(provider.stats.transactions, charged, 'no second endpoint-4 call');
      });
    }

    if (backend.name.startsWith('SQLite')) {
      test('one proxy per data directory: a second one is refused in one line; a SIGKILL frees the directory for the next at once', async () => {
        // `npm start` itself (the suite's instances run a test entry point that prints no boot refusal).
        const second = new ProxyProcess('crash-second', { ...proxy.settings, keepPort: false, script: 'proxy/cli.ts' });
        let killed = false;
        try {
          await assert.rejects(second.start(), /exited \(1\) while starting/);
          const log = readdirSync('test-results/crash-safety')
            .filter((file) => file.startsWith('crash-second.'))
            .map((file) => readFileSync(join('test-results/crash-safety', file), 'utf8'))
            .join('');
          assert.match(log, new RegExp(`^OBV_DATA_DIR ${dataDir} is in use by another obv-link proxy\\. `, 'm'));
          assert.doesNotMatch(log, /\n\s+at /, 'one line, no stack');
          // The running one is SIGKILLed: no stale lock to clear, the other takes the directory at once.
          await proxy.kill();
          killed = true;
          await second.start();
          const taken = await checkout(second.url, `crash-second-${Date.now()}`);
          assert.deepEqual([taken.refused, typeof taken.paid?.transactionId], [undefined, 'string']);
        } finally {
          await second.kill();
          if (killed) await proxy.start();
        }
      });
    }

    test('the stored state holds no accountToken and no link token in the clear', async () => {
      const tokens = [...provider.state.accounts.keys()];
      assert.ok(tokens.length > 0);
      const dump = await backend.dump();
      for (const secret of [...tokens, ...seen.filter((value) => value.startsWith('lt_'))]) {
        assert.equal(dump.includes(secret), false, `found ${secret.slice(0, 6)}… in the ${backend.name} storage`);
      }
    });
  });
}
