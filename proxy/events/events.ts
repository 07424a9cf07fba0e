// What the rest of the proxy sees of merchant events: `emit(type, data)` for any event, the session's
// end (`sessionEnded`: the one link.* event of a session, under an id derived from the session so every
// emitter, retry and instance agree on it), the expiry check scheduled when a session starts, and what
// the merchant's server asks of recorded events (list, acknowledge, redeliver: event-list.ts). With
// events off (no OBV_EVENTS_URL) every method does nothing.
import type { Logger } from 'pino';
import { MemoryStore, type Options as RateLimitOptions, type Store } from 'express-rate-limit';
import { problem } from '../common/errors.ts';
import { openSavedAccount } from '../sealing/sealed-outcome.ts';
import type { Sealer } from '../sealing/sealer.ts';
import type { ProxyConfig } from '../config/schema.ts';
import type { ProxyMetrics } from '../common/metrics.ts';
import { CANCELLED_CODE, type SessionRecord } from '../storage/sessions.ts';
import type { StoreOutageLog } from '../storage/outage-log.ts';
import { startEventWorker, type EventWorker } from './delivery.ts';
import { eventIdFor, randomEventId } from './ids.ts';
import type { EventOutbox, ListQuery, StoredEvent } from '../storage/outbox.ts';
import { buildEvent, type EventData, type EventType, type MerchantEvent } from '../storage/events.ts';
import { createEventSigner } from './signing.ts';
import {
  EVENT_ATTEMPT_TIMEOUT_MS,
  EVENT_LEASE_MS,
  EVENT_MAX_IN_FLIGHT,
  EVENT_POLL_INTERVAL_MS,
  EVENT_RETRY_DELAYS_MS,
  REDELIVERIES_PER_EVENT,
  REDELIVERY_WINDOW_MS,
  SESSION_CHECK_DELAY_MS,
} from '../config/limits.ts';

/** Timings of the delivery worker; tests shorten them (no test waits a day). */
export interface EventTimings {
  /** Waits between attempts (after the first, second, … failure); default EVENT_RETRY_DELAYS_MS. */
  retryDelaysMs?: readonly number[];
  attemptTimeoutMs?: number;
  leaseMs?: number;
  pollIntervalMs?: number;
  /** How long after a session's expiry its end is checked. */
  sessionCheckDelayMs?: number;
}

export interface EmitOptions {
  /**
   * What makes this event happen once (`payment:{merchantTransactionId}`): the id is derived from it, so
   * emitting again (a retry, another instance) records nothing new. Default: a random id.
   */
  once?: string;
}

export interface MerchantEvents {
  /** False when OBV_EVENTS_URL is not set. */
  readonly enabled: boolean;
  /** Records the event and queues its delivery; the event, or undefined when events are off or `once` already emitted. */
  emit<Type extends EventType>(
    type: Type,
    data: EventData<Type>,
    options?: EmitOptions,
  ): Promise<MerchantEvent<Type> | undefined>;
  /** A session started: its end is checked when its time is up (link.expired if it has no outcome then). */
  sessionStarted(record: SessionRecord): Promise<void>;
  /**
   * The session's link.* event, if it has ended (outcome stored, or expired); once per session. `released`
   * is the record as the merchant may see it (verifications/bank-step.ts `releasedRecord`): the caller has
   * it, so the bank-step marker is not read again here.
   */
  sessionEnded(released: SessionRecord): Promise<void>;
  /**
   * The event `sessionEnded` would record for `released`, built but not recorded: for a caller that records it
   * in the same step as the outcome (storage/outcome-write.ts). Undefined while the session has not ended, or
   * when events are off. Once recorded, the caller hands it to `recorded`.
   */
  sessionEndEvent(released: SessionRecord): MerchantEvent | undefined;
  /** An event recorded by the caller itself (`sessionEndEvent`): logged, and its delivery started now. */
  recorded(event: MerchantEvent): void;
  /** Events in the order recorded, with their delivery; undefined for an unknown `after`. */
  list(query: ListQuery): Promise<{ events: StoredEvent[]; hasMore: boolean } | undefined>;
  /** The merchant handled the event: no attempt follows (outbox `acknowledge`); undefined when unknown. */
  acknowledge(eventId: string): Promise<StoredEvent | undefined>;
  /**
   * An attempt now (outbox `redeliver`), on this instance if it is free; undefined when unknown. Refused
   * (429 `rate-limited`) beyond REDELIVERIES_PER_EVENT asks per event per REDELIVERY_WINDOW_MS.
   */
  redeliver(eventId: string): Promise<StoredEvent | undefined>;
  /** Stops the delivery worker (attempts in flight are cut; their leases bring them back). */
  close(): Promise<void>;
}

export interface MerchantEventsOptions {
  config: Pick<ProxyConfig, 'eventsUrl' | 'eventsSecrets'>;
  outbox: EventOutbox;
  /** Opens a success's consent (its address and user agent are sealed in the store) for link.succeeded. */
  sealer: Sealer;
  /** Where each event's redelivery asks are counted (Redis: across instances); default in this process's memory. */
  redeliveryStore?: Store | undefined;
  /**
   * A session as the merchant may see it (verifications/verifications.ts `released`): a success held for its
   * bank step is no end yet. Undefined when the session is gone.
   */
  released(sessionId: string): Promise<SessionRecord | undefined>;
  logger: Logger;
  metrics: Pick<ProxyMetrics, 'addEventBacklogSource' | 'eventsSent' | 'eventAttemptsFailed' | 'eventsFailed'>;
  now: () => number;
  timings?: EventTimings | undefined;
  /** Counts the delivery worker's store failures during an outage (storage/outage-log.ts). */
  outage?: Pick<StoreOutageLog, 'refused'> | undefined;
}

/** The order fields of a session, as events carry them (unset ones left out). */
function orderOf(record: SessionRecord) {
  const { merchantUserId, merchantTransactionId, amount, currency, hosted } = record;
  return Object.fromEntries(
    Object.entries({ merchantUserId, merchantTransactionId, amount, currency, hosted }).filter(
      ([, value]) => value !== undefined,
    ),
  );
}

/** The link.* event a session ended with; undefined while it has not ended. */
function sessionEndEvent(
  sealer: Sealer,
  record: SessionRecord,
): { [Type in EventType]: { type: Type; data: EventData<Type> } }[EventType] | undefined {
  const order = orderOf(record);
  const outcome = record.outcome;
  if (outcome?.status === 'success') {
    const { linkRef, accountLabel, fiName, fiAccountType, savedAccount, reconnect } = outcome;
    const saved = {
      ...(savedAccount ? { savedAccount: openSavedAccount(sealer, record.sessionId, savedAccount) } : {}),
      ...(reconnect ? { reconnect } : {}),
      ...(record.savedAccountId ? { savedAccountId: record.savedAccountId } : {}),
    };
    return { type: 'link.succeeded', data: { ...order, linkRef, accountLabel, fiName, fiAccountType, ...saved } };
  }
  if (outcome?.code === CANCELLED_CODE) return { type: 'link.cancelled', data: order };
  if (outcome) return { type: 'link.failed', data: { ...order, code: outcome.code, message: outcome.message } };
  if (record.state === 'expired')
    return { type: 'link.expired', data: { ...order, expiredAt: new Date(record.expiresAt).toISOString() } };
  return undefined;
}

const OFF: MerchantEvents = {
  enabled: false,
  emit: async () => undefined,
  sessionStarted: async () => undefined,
  sessionEnded: async () => undefined,
  sessionEndEvent: () => undefined,
  recorded: () => undefined,
  list: async () => undefined,
  acknowledge: async () => undefined,
  redeliver: async () => undefined,
  close: async () => undefined,
};

export function createMerchantEvents(options: MerchantEventsOptions): MerchantEvents {
  const { config, outbox, now } = options;
  if (!config.eventsUrl || !config.eventsSecrets?.length) return OFF;
  const timings = options.timings ?? {};
  const sessionCheckDelayMs = timings.sessionCheckDelayMs ?? SESSION_CHECK_DELAY_MS;
  const logger = options.logger.child({ component: 'merchant-events' });
  options.metrics.addEventBacklogSource(() => outbox.backlog());
  const redeliveries = options.redeliveryStore ?? new MemoryStore();
  // express-rate-limit's stores read only the window from their options.
  void redeliveries.init?.({ windowMs: REDELIVERY_WINDOW_MS } as RateLimitOptions);

  /** Counts one redelivery ask of `eventId`; refuses it past the event's budget. */
  async function countRedelivery(eventId: string): Promise<void> {
    const { totalHits, resetTime } = await redeliveries.increment(`event:${eventId}`);
    if (totalHits <= REDELIVERIES_PER_EVENT) return;
    const retryAfterSeconds = Math.max(
      1,
      Math.ceil(((resetTime?.getTime() ?? Date.now() + REDELIVERY_WINDOW_MS) - Date.now()) / 1000),
    );
    logger.warn({ event: eventId, asked: totalHits }, 'merchant event redelivery refused: asked too often');
    throw problem(
      'rate-limited',
      `This event was asked for again ${REDELIVERIES_PER_EVENT} times within ${REDELIVERY_WINDOW_MS / 60_000} minutes; ` +
        'try again later (its delivery is listed by GET /events).',
      { headers: { 'retry-after': String(retryAfterSeconds) } },
    );
  }

  async function emit<Type extends EventType>(
    type: Type,
    data: EventData<Type>,
    emitOptions: EmitOptions = {},
  ): Promise<MerchantEvent<Type> | undefined> {
    const event = buildEvent(emitOptions.once ? eventIdFor(emitOptions.once) : randomEventId(), type, data, now());
    if (!(await outbox.append(event as MerchantEvent, now()))) return undefined;
    recorded(event as MerchantEvent);
    return event;
  }

  function recorded(event: MerchantEvent): void {
    logger.info({ event: event.id, type: event.type }, 'merchant event recorded');
    worker.wake();
  }

  /** The session's end event, built under the id every emitter of it agrees on (recorded once). */
  function endEvent(released: SessionRecord): MerchantEvent | undefined {
    const end = sessionEndEvent(options.sealer, released);
    return (
      end &&
      (buildEvent(eventIdFor(`session-end:${released.sessionId}`), end.type, end.data as never, now()) as MerchantEvent)
    );
  }

  /**
   * The session's end as the merchant may hear it: a success held for the bank step (verifications/bank-step.ts)
   * has not ended yet. It is told once the step is confirmed (its starting browser came back: with the return
   * URL's proof at once, without it once the grace after the outcome passed), or as link.expired once its
   * time is up unconfirmed: never a link reference backed by someone else's bank step.
   */
  async function sessionEnded(released: SessionRecord): Promise<void> {
    const event = endEvent(released);
    if (event && (await outbox.append(event, now()))) recorded(event);
  }

  // `emit` (above) wakes this worker; it is only ever called after this line ran (the worker's own jobs
  // start on a later tick, once a claim has answered).
  const worker: EventWorker = startEventWorker({
    outbox,
    url: config.eventsUrl,
    sign: createEventSigner(config.eventsSecrets),
    logger,
    metrics: options.metrics,
    now,
    retryDelaysMs: timings.retryDelaysMs ?? EVENT_RETRY_DELAYS_MS,
    attemptTimeoutMs: timings.attemptTimeoutMs ?? EVENT_ATTEMPT_TIMEOUT_MS,
    leaseMs: timings.leaseMs ?? EVENT_LEASE_MS,
    pollIntervalMs: timings.pollIntervalMs ?? EVENT_POLL_INTERVAL_MS,
    maxInFlight: EVENT_MAX_IN_FLIGHT,
    ...(options.outage ? { outage: options.outage } : {}),
    async checkSession(sessionId) {
      const released = await options.released(sessionId);
      if (!released) return 'done';
      if (!sessionEndEvent(options.sealer, released)) return now() + sessionCheckDelayMs;
      // Also re-emits an outcome's event whose first emit was lost (an instance killed right after the
      // outcome was stored): same id, so nothing new when it was not.
      await sessionEnded(released);
      return 'done';
    },
  });

  return {
    enabled: true,
    emit,
    sessionEnded,
    sessionEndEvent: endEvent,
    recorded,
    async sessionStarted(record) {
      await outbox.scheduleSessionCheck(record.sessionId, record.expiresAt + sessionCheckDelayMs);
    },
    list: (query) => outbox.list(query, now()),
    async acknowledge(eventId) {
      const stored = await outbox.acknowledge(eventId, now());
      if (stored)
        logger.info(
          { event: eventId, type: stored.event.type },
          'merchant event acknowledged through the API: no more attempts',
        );
      return stored;
    },
    async redeliver(eventId) {
      await countRedelivery(eventId);
      const stored = await outbox.redeliver(eventId, now());
      if (stored) {
        logger.info({ event: eventId, type: stored.event.type }, 'merchant event redelivery asked for through the API');
        worker.wake();
      }
      return stored;
    },
    // The outbox is the backend's (or the caller's): whoever made it closes it; the counters made here, here.
    async close() {
      if (!options.redeliveryStore) await redeliveries.shutdown?.();
      await worker.close();
    },
  };
}
