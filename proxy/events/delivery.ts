// The delivery worker: each instance claims due outbox jobs (leased, so one instance at a time runs a
// job), POSTs events signed to the merchant's URL, and reschedules what failed on the backoff schedule.
// A 2xx ends a delivery; any other answer, a connection error or no answer within the attempt's time
// is one failed attempt: counted, logged once (with the reason and when it is tried next), retried.
// Session-check jobs (the expiry of a session) run here too, through `checkSession`.
import type { Logger } from 'pino';
import type { ProxyMetrics } from '../common/metrics.ts';
import { WarningLimiter } from '../common/log-limits.ts';
import { safeError } from '../common/logger.ts';
import { sessionLogRef } from '../common/ids.ts';
import type { EventOutbox, OutboxJob, StoredEvent } from '../storage/outbox.ts';
import type { EventSigner } from './signing.ts';
import { EVENT_TRIM_INTERVAL_MS } from '../config/limits.ts';

export interface EventWorkerOptions {
  outbox: EventOutbox;
  url: string;
  sign: EventSigner;
  logger: Logger;
  metrics: Pick<ProxyMetrics, 'eventsSent' | 'eventAttemptsFailed' | 'eventsFailed'>;
  now: () => number;
  retryDelaysMs: readonly number[];
  attemptTimeoutMs: number;
  leaseMs: number;
  pollIntervalMs: number;
  maxInFlight: number;
  /** Runs a session-check job: `done`, or when to look again. */
  checkSession(sessionId: string): Promise<'done' | number>;
}

export interface EventWorker {
  /** Looks for due jobs now (an event was just recorded) instead of at the next poll. */
  wake(): void;
  /** Stops claiming; attempts in flight are cut (their leases bring the jobs back). */
  close(): Promise<void>;
}

type AttemptResult = { ok: true } | { ok: false; reason: string; kind: 'status' | 'timeout' | 'network' } | { ok: false; kind: 'shutdown' };

/**
 * Why a connection failed, in words that are safe to log and to list (GET /events `lastError`): the
 * system's error code only (`ECONNREFUSED`), never an error message (which may quote the URL).
 */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  const code = typeof cause?.code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(cause.code) ? cause.code : undefined;
  return code ? `connection failed (${code})` : 'connection failed';
}

export function startEventWorker(options: EventWorkerOptions): EventWorker {
  const { outbox, logger, metrics, now } = options;
  const shutdown = new AbortController();
  const inFlight = new Set<Promise<void>>();
  // The outbox failing (Redis down) would otherwise log once per poll: once a minute is enough.
  const outboxWarnings = new WarningLimiter(logger);
  let filling = false;
  let again = false;

  async function attempt(stored: StoredEvent): Promise<AttemptResult> {
    const { event, body } = stored;
    const signal = AbortSignal.any([shutdown.signal, AbortSignal.timeout(options.attemptTimeoutMs)]);
    try {
      const response = await fetch(options.url, {
        method: 'POST',
        headers: { ...options.sign(event.id, body, now()), 'content-type': 'application/json', 'user-agent': 'obv-link-proxy' },
        body,
        redirect: 'manual',
        signal,
      });
      await response.body?.cancel().catch(() => undefined);
      if (response.status >= 200 && response.status < 300) return { ok: true };
      return { ok: false, kind: 'status', reason: `answered ${response.status}` };
    } catch (error) {
      if (shutdown.signal.aborted) return { ok: false, kind: 'shutdown' };
      if (signal.aborted) return { ok: false, kind: 'timeout', reason: `no answer within ${options.attemptTimeoutMs} ms` };
      return { ok: false, kind: 'network', reason: networkReason(error) };
    }
  }

  async function deliver(eventId: string): Promise<void> {
    const stored = await outbox.get(eventId);
    if (stored?.delivery.state !== 'pending') {
      // Delivered by another instance after our lease ran out, acknowledged, or past the retention: nothing to send.
      await outbox.finishJob({ kind: 'deliver', eventId });
      return;
    }
    const { event } = stored;
    const attemptNumber = stored.delivery.attempts + 1;
    const result = await attempt(stored);
    if (result.ok) {
      await outbox.settle(eventId, { ok: true }, now());
      metrics.eventsSent.inc({ type: event.type });
      logger.debug({ event: eventId, type: event.type, attempt: attemptNumber }, 'merchant event delivered');
      return;
    }
    if (result.kind === 'shutdown') return;
    metrics.eventAttemptsFailed.inc({ reason: result.kind });
    const delay = options.retryDelaysMs[attemptNumber - 1];
    if (delay === undefined) {
      await outbox.settle(eventId, { ok: false, error: result.reason }, now());
      metrics.eventsFailed.inc({ type: event.type });
      logger.error({ event: eventId, type: event.type, attempt: attemptNumber, reason: result.reason },
        'merchant event not delivered: its last attempt failed; it stays listed in GET /events (delivery=failed)');
      return;
    }
    await outbox.retryAt(eventId, result.reason, now(), now() + delay);
    // One line per event per retry step: the schedule itself bounds how often an event is logged.
    logger.warn({ event: eventId, type: event.type, attempt: attemptNumber, reason: result.reason, retryInSeconds: Math.round(delay / 1000) },
      'merchant event delivery failed; it will be retried');
  }

  async function run(job: OutboxJob): Promise<void> {
    if (job.kind === 'deliver') {
      await deliver(job.eventId);
      return;
    }
    const next = await options.checkSession(job.sessionId);
    if (next === 'done') await outbox.finishJob(job);
    else await outbox.postpone(job, next);
  }

  function launch(job: OutboxJob): void {
    const running: Promise<void> = run(job)
      .catch((error: unknown) => {
        // The job's lease brings it back; a failing backend is logged at most once a minute.
        const subject = job.kind === 'deliver' ? { event: job.eventId } : { session: sessionLogRef(job.sessionId) };
        outboxWarnings.warn(`job:${job.kind}`, { ...subject, err: safeError(error) }, 'merchant events: a job failed; it runs again when its lease ends');
      })
      .finally(() => {
        inFlight.delete(running);
        wake();
      });
    inFlight.add(running);
  }

  async function fill(): Promise<void> {
    while (!shutdown.signal.aborted && inFlight.size < options.maxInFlight) {
      const jobs = await outbox.claimDue(now(), options.leaseMs, options.maxInFlight - inFlight.size);
      if (shutdown.signal.aborted) return;
      for (const job of jobs) launch(job);
      if (jobs.length === 0) return;
    }
  }

  function wake(): void {
    if (shutdown.signal.aborted) return;
    if (filling) {
      again = true;
      return;
    }
    filling = true;
    fill()
      .catch((error: unknown) => outboxWarnings.warn('claim', { err: safeError(error) }, 'merchant events: the outbox cannot be read; retrying'))
      .finally(() => {
        filling = false;
        if (again) {
          again = false;
          wake();
        }
      });
  }

  const poller = setInterval(wake, options.pollIntervalMs);
  poller.unref();
  const trimmer = setInterval(() => {
    outbox.trim(now()).catch((error: unknown) => outboxWarnings.warn('trim', { err: safeError(error) }, 'merchant events: could not trim the list'));
  }, EVENT_TRIM_INTERVAL_MS);
  trimmer.unref();
  wake();

  return {
    wake,
    async close() {
      clearInterval(poller);
      clearInterval(trimmer);
      shutdown.abort();
      await Promise.allSettled([...inFlight]);
    },
  };
}
