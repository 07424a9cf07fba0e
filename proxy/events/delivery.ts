// The delivery worker: each instance claims due outbox jobs (leased, so one instance at a time runs a
// job), at most `maxInFlight` at once, and runs them: a delivery (one attempt: attempt.ts) or a session
// check (the expiry of a session, through `checkSession`). It looks for due jobs on a timer and at once
// when an event is recorded, and trims the list of events past the retention.
import { WarningLimiter } from '../common/log-limits.ts';
import { safeError } from '../common/logger.ts';
import { sessionLogRef } from '../common/ids.ts';
import type { EventOutbox, OutboxJob } from '../storage/outbox.ts';
import { deliverEvent, type AttemptOptions } from './attempt.ts';
import { EVENT_TRIM_INTERVAL_MS } from '../config/limits.ts';
import { StoreOutageLog } from '../storage/outage-log.ts';

export interface EventWorkerOptions extends AttemptOptions {
  outbox: EventOutbox;
  leaseMs: number;
  pollIntervalMs: number;
  maxInFlight: number;
  /** Runs a session-check job: `done`, or when to look again. */
  checkSession(sessionId: string): Promise<'done' | number>;
  /** Where a store outage or a full disk is counted (one line per outage) instead of a warning here. */
  outage?: Pick<StoreOutageLog, 'refused'>;
}

export interface EventWorker {
  /** Looks for due jobs now (an event was just recorded) instead of at the next poll. */
  wake(): void;
  /** Stops claiming; attempts in flight are cut (their leases bring the jobs back). */
  close(): Promise<void>;
}

export function startEventWorker(options: EventWorkerOptions): EventWorker {
  const { outbox, logger, now } = options;
  const shutdown = new AbortController();
  const inFlight = new Set<Promise<void>>();
  // The outbox failing would otherwise log once per poll: once a minute is enough, and an outage the
  // outage log tells (Redis down, a full disk) is only counted there.
  const warnings = new WarningLimiter(logger);
  const outboxWarnings = {
    warn(key: string, fields: Record<string, unknown>, message: string, error: unknown): void {
      if (options.outage && StoreOutageLog.covers(error)) options.outage.refused('eventJobs', error);
      else warnings.warn(key, { ...fields, err: safeError(error) }, message);
    },
  };
  let filling = false;
  let again = false;

  async function run(job: OutboxJob): Promise<void> {
    if (job.kind === 'deliver') {
      await deliverEvent(options, job.eventId, shutdown.signal);
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
        outboxWarnings.warn(
          `job:${job.kind}`,
          subject,
          'merchant events: a job failed; it runs again when its lease ends',
          error,
        );
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
      .catch((error: unknown) =>
        outboxWarnings.warn('claim', {}, 'merchant events: the outbox cannot be read; retrying', error),
      )
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
    outbox
      .trim(now())
      .catch((error: unknown) => outboxWarnings.warn('trim', {}, 'merchant events: could not trim the list', error));
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
