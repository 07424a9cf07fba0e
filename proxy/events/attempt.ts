// One attempt at delivering one merchant event: the signed POST to the merchant's URL, with its own
// time-out, and what its result does to the event's delivery. A 2xx ends the delivery; any other answer,
// a connection error or no answer within the attempt's time is one failed attempt: counted, logged once
// (with the reason and when it is tried next), retried on the schedule, given up after its last step.
import type { Logger } from 'pino';
import type { ProxyMetrics } from '../common/metrics.ts';
import type { EventOutbox, StoredEvent } from '../storage/outbox.ts';
import type { EventSigner } from './signing.ts';

export interface AttemptOptions {
  outbox: Pick<EventOutbox, 'get' | 'finishJob' | 'settle' | 'retryAt'>;
  url: string;
  sign: EventSigner;
  logger: Logger;
  metrics: Pick<ProxyMetrics, 'eventsSent' | 'eventAttemptsFailed' | 'eventsFailed'>;
  now: () => number;
  retryDelaysMs: readonly number[];
  attemptTimeoutMs: number;
}

type AttemptResult =
  | { ok: true }
  | { ok: false; reason: string; kind: 'status' | 'timeout' | 'network' }
  | { ok: false; kind: 'shutdown' };

/**
 * Why a connection failed, in words that are safe to log and to list (GET /events `lastError`): the
 * system's error code only (`ECONNREFUSED`), never an error message (which may quote the URL).
 */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  const code = typeof cause?.code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(cause.code) ? cause.code : undefined;
  return code ? `connection failed (${code})` : 'connection failed';
}

async function attempt(options: AttemptOptions, stored: StoredEvent, shutdown: AbortSignal): Promise<AttemptResult> {
  const { event, body } = stored;
  const signal = AbortSignal.any([shutdown, AbortSignal.timeout(options.attemptTimeoutMs)]);
  try {
    const response = await fetch(options.url, {
      method: 'POST',
      headers: {
        ...options.sign(event.id, body, options.now()),
        'content-type': 'application/json',
        'user-agent': 'obv-link-proxy',
      },
      body,
      redirect: 'manual',
      signal,
    });
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { ok: true };
    return { ok: false, kind: 'status', reason: `answered ${response.status}` };
  } catch (error) {
    if (shutdown.aborted) return { ok: false, kind: 'shutdown' };
    if (signal.aborted)
      return { ok: false, kind: 'timeout', reason: `no answer within ${options.attemptTimeoutMs} ms` };
    return { ok: false, kind: 'network', reason: networkReason(error) };
  }
}

/**
 * One attempt at the delivery of `eventId`, and what it does to the delivery: delivered on a 2xx; on
 * anything else counted, logged once, and due again on the schedule, or failed after its last step. An
 * attempt cut by `shutdown` changes nothing (its job's lease brings it back).
 */
export async function deliverEvent(options: AttemptOptions, eventId: string, shutdown: AbortSignal): Promise<void> {
  const { outbox, metrics, logger, now } = options;
  const stored = await outbox.get(eventId);
  if (stored?.delivery.state !== 'pending') {
    // Delivered by another instance after our lease ran out, acknowledged, or past the retention: nothing to send.
    await outbox.finishJob({ kind: 'deliver', eventId });
    return;
  }
  const { event } = stored;
  const attemptNumber = stored.delivery.attempts + 1;
  const result = await attempt(options, stored, shutdown);
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
    logger.error(
      { event: eventId, type: event.type, attempt: attemptNumber, reason: result.reason },
      'merchant event not delivered: its last attempt failed; it stays listed in GET /events (delivery=failed)',
    );
    return;
  }
  await outbox.retryAt(eventId, result.reason, now(), now() + delay);
  // One line per event per retry step: the schedule itself bounds how often an event is logged.
  logger.warn(
    {
      event: eventId,
      type: event.type,
      attempt: attemptNumber,
      reason: result.reason,
      retryInSeconds: Math.round(delay / 1000),
    },
    'merchant event delivery failed; it will be retried',
  );
}
