// Prometheus metrics (prom-client). Each proxy has its own Registry, not prom-client's global one, so
// two proxies in one process (tests, several mounts) never collide, and the merchant decides where it is
// served: `proxy.metricsHandler` on a route of their choice, or npm start's OBV_METRICS_PORT listener
// (loopback by default). Nothing here is mounted on the public router.
import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The merchant events not yet delivered, as the outbox counts them (storage/outbox.ts `EventBacklog`). */
export interface EventBacklog {
  pending: number;
  /** Epoch ms since when the oldest of them has been pending; undefined when none. */
  oldestPendingAt: number | undefined;
}

export interface ProxyMetrics {
  registry: Registry;
  /** Verification starts by result: `started`, or the problem slug that refused it (`rate-limited`, …). */
  starts: Counter<'result'>;
  /** Stored outcomes by kind (`success`, `failure`). */
  outcomes: Counter<'status'>;
  /** Notifications refused, by reason (`signature`, `unknown_ref`, `bad_json`). */
  refusedNotifications: Counter<'reason'>;
  /** Upstream call durations by endpoint (`token`, `verification`, `transaction`) and result. */
  upstreamSeconds: Histogram<'endpoint' | 'result'>;
  /** Access-token requests by result (`ok`, `error`). */
  tokenRefreshes: Counter<'result'>;
  /** Session store calls that failed because the backend could not be reached. */
  storeErrors: Counter;
  /** Adds a source of open WebSockets (one per attached relay). */
  addSocketSource(count: () => number): void;
  /** Requests on the server-only routes a merchant API key let through, by the key's configured id. */
  merchantApiRequests: Counter<'key_id'>;
  /** Merchant events delivered (answered 2xx), by type. */
  eventsSent: Counter<'type'>;
  /** Failed delivery attempts, by reason (`status`: a non-2xx answer, `timeout`, `network`). */
  eventAttemptsFailed: Counter<'reason'>;
  /** Merchant events given up after their last attempt, by type. */
  eventsFailed: Counter<'type'>;
  /** Where the pending-events gauges read from (the outbox; in Redis mode every instance reports the shared figure). */
  addEventBacklogSource(read: () => Promise<EventBacklog>): void;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): ProxyMetrics {
  const registry = new Registry();
  const sources: (() => number)[] = [];
  const registers = [registry];
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'obv_' });
  new Gauge({
    name: 'obv_relay_open_sockets',
    help: 'Open WebSockets on this instance.',
    registers,
    collect() {
      this.set(sources.reduce((sum, count) => sum + count(), 0));
    },
  });
  let readBacklog: (() => Promise<EventBacklog>) | undefined;
  let backlog: Promise<EventBacklog | undefined> | undefined;
  // Both gauges come from one read per scrape; a read that fails (Redis down) leaves the last values.
  const currentBacklog = () => {
    backlog ??= (readBacklog?.() ?? Promise.resolve(undefined))
      .catch(() => undefined)
      .finally(() => {
        setImmediate(() => (backlog = undefined));
      });
    return backlog;
  };
  new Gauge({
    name: 'obv_merchant_events_pending',
    help: 'Merchant events recorded and not yet delivered (nor given up).',
    registers,
    async collect() {
      const read = await currentBacklog();
      if (read) this.set(read.pending);
    },
  });
  new Gauge({
    name: 'obv_merchant_events_oldest_pending_seconds',
    help: 'Age of the oldest undelivered merchant event (0 when none).',
    registers,
    async collect() {
      const read = await currentBacklog();
      if (read)
        this.set(read.oldestPendingAt === undefined ? 0 : Math.max(0, (Date.now() - read.oldestPendingAt) / 1000));
    },
  });
  return {
    registry,
    starts: new Counter({
      name: 'obv_verification_starts_total',
      help: 'Verification starts by result.',
      labelNames: ['result'],
      registers,
    }),
    outcomes: new Counter({
      name: 'obv_outcomes_total',
      help: 'Verification outcomes stored, by kind.',
      labelNames: ['status'],
      registers,
    }),
    refusedNotifications: new Counter({
      name: 'obv_notifications_refused_total',
      help: 'Provider notifications refused, by reason.',
      labelNames: ['reason'],
      registers,
    }),
    upstreamSeconds: new Histogram({
      name: 'obv_upstream_request_duration_seconds',
      help: 'Duration of calls to the provider, by endpoint and result.',
      labelNames: ['endpoint', 'result'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    tokenRefreshes: new Counter({
      name: 'obv_token_refreshes_total',
      help: 'Access-token requests, by result.',
      labelNames: ['result'],
      registers,
    }),
    storeErrors: new Counter({
      name: 'obv_session_store_errors_total',
      help: 'Session store calls that failed (backend unreachable).',
      registers,
    }),
    addSocketSource(count) {
      sources.push(count);
    },
    merchantApiRequests: new Counter({
      name: 'obv_merchant_api_requests_total',
      help: 'Server-only route requests a merchant API key let through, by key id.',
      labelNames: ['key_id'],
      registers,
    }),
    eventsSent: new Counter({
      name: 'obv_merchant_events_sent_total',
      help: 'Merchant events delivered (answered 2xx), by type.',
      labelNames: ['type'],
      registers,
    }),
    eventAttemptsFailed: new Counter({
      name: 'obv_merchant_event_attempts_failed_total',
      help: 'Failed merchant event delivery attempts, by reason.',
      labelNames: ['reason'],
      registers,
    }),
    eventsFailed: new Counter({
      name: 'obv_merchant_events_failed_total',
      help: 'Merchant events given up after their last attempt, by type.',
      labelNames: ['type'],
      registers,
    }),
    addEventBacklogSource(read) {
      readBacklog = read;
    },
  };
}

/** Times `call` into `histogram{endpoint, result}` (`ok` or `error`). */
export async function timeUpstream<T>(
  histogram: ProxyMetrics['upstreamSeconds'],
  endpoint: string,
  call: () => Promise<T>,
): Promise<T> {
  const stop = histogram.startTimer({ endpoint });
  try {
    const value = await call();
    stop({ result: 'ok' });
    return value;
  } catch (error) {
    stop({ result: 'error' });
    throw error;
  }
}

/** Express handler serving the registry in the Prometheus text format. */
export function metricsHandler(registry: Registry): RequestHandler {
  return (_req, res, next) => {
    registry.metrics().then((text) => {
      res.set('content-type', registry.contentType).set('cache-control', 'no-store').send(text);
    }, next);
  };
}
