// The growth section's proxy process (sections/growth.ts): it fills a SQLite data directory through the
// storage layer as a shop's checkouts would leave it, runs obv-link's proxy on that file (the parent
// times GET /events over HTTP), and prunes it as the proxy's sweep does once the records are past their
// retention. Everything that touches the file runs here, in the process whose event loop must never be
// held up, and that loop's delays are what it reports.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import express from 'express';
import { createLogger, createObvProxy, createOutboxCodec, type ObvProxy } from '../../proxy/index.ts';
import { SANDBOX_SEALING_KEY } from '../../proxy/config/sealing-keys.ts';
import { randomEventId } from '../../proxy/events/ids.ts';
import type { MerchantEvent } from '../../proxy/storage/events.ts';
import { newId } from '../../proxy/common/ids.ts';
import { openSqliteStorage, type SqliteStorage } from '../../proxy/storage/sqlite/storage.ts';
import { StepTimes } from '../../proxy/storage/sqlite/housekeeping.ts';
import { BENCH_MERCHANT_API_KEY, benchProxyOptions } from '../lib/obv-proxy-options.ts';
import { WEBHOOK_SECRET } from '../lib/notifications.ts';
import { serveRpc } from '../lib/rpc.ts';

const MINUTE_MS = 60_000;
/** The events sealed as the proxy (sandbox mode, its published key) seals them, so its start finds none to seal. */
const outboxCodec = createOutboxCodec([SANDBOX_SEALING_KEY]);
const HOUR_MS = 60 * MINUTE_MS;
/** The clock moves this much per checkout (so records expire in the order they were made). */
const CHECKOUT_INTERVAL_MS = 1_000;
/** Checkouts written at once (their acknowledgements share commits' fsyncs, as concurrent requests do). */
const CONCURRENCY = 64;
/** Every this-many events, one id is kept for the parent's `after` (pages from all over the list). */
const SAMPLE_EVERY = 97;
/** The proxy's defaults (config/schema.ts, limits.ts): session 15 min, link session 30 min, grace 1 h, webhook-ids 24 h, payments 30 days. */
const SESSION_TTL_MS = 15 * MINUTE_MS;
const LINK_TTL_MS = 30 * MINUTE_MS;
const GRACE_MS = HOUR_MS;
const WEBHOOK_ID_TTL_MS = 24 * HOUR_MS;
const PAYMENT_RETENTION_MS = 30 * 24 * HOUR_MS;

const logger = createLogger('silent');
let running: { proxy: ObvProxy; server: http.Server; delays: ReturnType<typeof monitorEventLoopDelay> } | undefined;

/** One checkout as the proxy records it: a link session, a start, the bank's success, a payment, two events. */
async function checkout(storage: SqliteStorage, index: number, now: number, eventIds: string[]): Promise<void> {
  const order = `order-${index}`;
  const merchantUserId = `user-${index % 5_000}`;
  const purchase = { merchantUserId, merchantTransactionId: order, amount: '49.99', currency: 'USD' };
  const linkSessionId = `${newId()}${newId()}`;
  await storage.linkSessions.create(
    linkSessionId,
    {
      ...purchase,
      consumer: { firstName: 'Ada', lastName: 'Lovelace', email: `shopper-${index}@example.com` },
      language: 'en-US',
      createdAt: now,
      expiresAt: now + LINK_TTL_MS,
    },
    LINK_TTL_MS + GRACE_MS,
  );
  await storage.linkSessions.use(linkSessionId, 50);
  const sessionId = newId();
  const startKey = `start:${linkSessionId}`;
  await storage.sessionStore.claimIdempotencyKey(startKey, SESSION_TTL_MS);
  const returnRef = newId();
  const verificationId = `vrf_${newId()}`;
  await storage.sessionStore.create({
    sessionId,
    notificationRef: newId(),
    returnRef,
    consumerUrl: `https://bank.example/consumer/${verificationId}?t=${newId()}${newId()}`,
    state: 'pending',
    createdAt: now,
    expiresAt: now + SESSION_TTL_MS,
    ...purchase,
    verificationId,
    language: 'en-US',
    linkSessionId,
  });
  await storage.sessionStore.completeIdempotencyKey(startKey, sessionId, SESSION_TTL_MS);
  await storage.sessionStore.mark(`return:${returnRef}`, sessionId, SESSION_TTL_MS + GRACE_MS);
  await storage.sessionStore.mark(`webhook:msg_${newId()}`, sessionId, WEBHOOK_ID_TTL_MS);
  const linkRef = newId();
  await storage.sessionStore.mark(`link:${linkRef}`, sessionId, SESSION_TTL_MS + GRACE_MS);
  const account = { accountLabel: 'Checking ••••4321', fiName: 'Sandbox Federal Bank', fiAccountType: 'CHECKING' };
  await storage.sessionStore.settle(sessionId, {
    status: 'success',
    linkRef,
    sealedAccountToken: `obv1.k1.${newId()}${newId()}${newId()}${newId()}`,
    ...account,
  });
  await recordDelivered(
    storage,
    {
      id: randomEventId(),
      type: 'link.succeeded',
      createdAt: new Date(now).toISOString(),
      data: { ...purchase, linkRef, ...account },
    },
    now,
    index,
    eventIds,
  );
  const paymentId = `pay_${newId()}`;
  const pending = {
    ...purchase,
    ...account,
    paymentId,
    state: 'pending' as const,
    leaseExpiresAt: now + 25_000,
    linkRef,
    paidAt: new Date(now).toISOString(),
    idempotencyKey: `pay-${order}`,
    requestDigest: newId(),
  };
  await storage.payments.claim(pending, PAYMENT_RETENTION_MS);
  const transactionId = `txn_${newId()}`;
  const { leaseExpiresAt: _lease, ...rest } = pending;
  await storage.payments.finish(
    {
      ...rest,
      state: 'completed',
      providerStatus: 201,
      transactionId,
      transactionStatus: 'APPROVED',
      providerResponse: { transactionId, transactionStatus: 'APPROVED', merchantTransactionId: order },
    },
    PAYMENT_RETENTION_MS,
  );
  await recordDelivered(
    storage,
    {
      id: randomEventId(),
      type: 'payment.succeeded',
      createdAt: new Date(now).toISOString(),
      data: { ...purchase, paymentId, linkRef, transactionId, transactionStatus: 'APPROVED' },
    },
    now,
    index,
    eventIds,
  );
}

async function recordDelivered(
  storage: SqliteStorage,
  event: MerchantEvent,
  now: number,
  index: number,
  eventIds: string[],
): Promise<void> {
  await storage.eventOutbox.append(event, now);
  await storage.eventOutbox.settle(event.id, { ok: true }, now + 50);
  if (index % SAMPLE_EVERY === 0) eventIds.push(event.id);
}

serveRpc({
  /**
   * Fills `dataDir` with `checkouts` checkouts from `startAt` on (one a second of the clock), or as many
   * as `timeLimitMs` allows. The fsyncs of acknowledgements are skipped: the fill is not what is timed.
   * The file is closed at the end (checkpointed, its WAL removed), as a stopped proxy leaves it.
   */
  fill: async ({
    dataDir,
    checkouts,
    startAt,
    timeLimitMs,
  }: {
    dataDir: string;
    checkouts: number;
    startAt: number;
    timeLimitMs: number;
  }) => {
    const clock = { now: startAt };
    const storage = openSqliteStorage(dataDir, {
      outboxCodec,
      now: () => clock.now,
      sweepIntervalMs: 24 * HOUR_MS,
      fsync: async () => {},
    });
    // Nor does the fill sync a checkpoint (nor checkpoint often): two to three times faster, the same file.
    storage.handle.db.exec('PRAGMA synchronous = OFF; PRAGMA wal_autocheckpoint = 20000');
    const started = performance.now();
    const eventIds: string[] = [];
    let filled = 0;
    try {
      while (filled < checkouts && performance.now() - started < timeLimitMs) {
        const batch = Math.min(CONCURRENCY, checkouts - filled);
        await Promise.all(
          Array.from({ length: batch }, (_, offset) =>
            checkout(storage, filled + offset, clock.now + offset * CHECKOUT_INTERVAL_MS, eventIds),
          ),
        );
        filled += batch;
        clock.now += batch * CHECKOUT_INTERVAL_MS;
      }
    } finally {
      await storage.close();
    }
    return { filled, fillMs: performance.now() - started, endAt: clock.now, eventIds };
  },

  /**
   * Starts the proxy on `dataDir` (clock at `now`, moving): how long createObvProxy took (it opens the
   * file, checks its schema, prepares its statements and clears what a killed process left).
   */
  start: async ({ dataDir, now }: { dataDir: string; now: number }) => {
    const app = express();
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const since = Date.now();
    const started = performance.now();
    const proxy = createObvProxy({
      ...benchProxyOptions(origin),
      merchantApiKey: BENCH_MERCHANT_API_KEY,
      // GET /events is there when events are delivered somewhere: an address nothing listens on (every event is delivered already).
      eventsUrl: 'http://127.0.0.1:9/events',
      eventsSecrets: WEBHOOK_SECRET,
      storage: 'sqlite',
      dataDir,
      logger,
      now: () => now + (Date.now() - since),
    });
    const startMs = performance.now() - started;
    app.use(proxy.mountPath, proxy.router);
    const delays = monitorEventLoopDelay({ resolution: 5 });
    delays.enable();
    running = { proxy, server, delays };
    return { origin: `${origin}${proxy.mountPath}`, startMs };
  },

  /** The longest the proxy's event loop was held up since start (or the last call), in ms. */
  loopDelay: () => {
    if (!running) throw new Error('no proxy running');
    const maxMs = running.delays.max / 1e6;
    running.delays.reset();
    return maxMs;
  },

  stop: async () => {
    if (!running) return;
    const { proxy, server, delays } = running;
    running = undefined;
    delays.disable();
    await proxy.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  },

  /**
   * Opens `dataDir` at `now` and prunes it as the proxy does: the outbox's trim and the storage's sweep
   * (deletes in batches, the vacuum, the WAL's checkpoint). How long each step held the event loop, and
   * the loop's own longest delay meanwhile.
   */
  prune: async ({ dataDir, now }: { dataDir: string; now: number }) => {
    const opened = performance.now();
    const storage = openSqliteStorage(dataDir, { outboxCodec, now: () => now, sweepIntervalMs: 24 * HOUR_MS });
    const openMs = performance.now() - opened;
    const delays = monitorEventLoopDelay({ resolution: 5 });
    delays.enable();
    const started = performance.now();
    try {
      const times = new StepTimes();
      const trimmed = await storage.eventOutbox.trimInSteps(now, times);
      const swept = await storage.sweep();
      return {
        openMs,
        ms: performance.now() - started,
        deleted: trimmed.deleted + swept.deleted,
        vacuumedPages: swept.vacuumedPages,
        checkpointed: swept.checkpointed,
        steps: times.steps + swept.times.steps,
        longestStepMs: Math.max(times.longestMs, swept.times.longestMs),
        longestStep: times.longestMs >= swept.times.longestMs ? times.longest : swept.times.longest,
        longestStepCpuMs: Math.max(times.longestCpuMs, swept.times.longestCpuMs),
        checkpoints: (times.counts.checkpoint ?? 0) + (swept.times.counts.checkpoint ?? 0),
        longestCheckpointMs: Math.max(times.longestCheckpointMs, swept.times.longestCheckpointMs),
        loopDelayMaxMs: delays.max / 1e6,
      };
    } finally {
      delays.disable();
      await storage.close();
    }
  },
});
