// What the merchant's server does with recorded events, over HTTP (routes/events.ts) and in process
// (`proxy.listEvents`, `acknowledgeEvent`, `redeliverEvent`), with one set of rules: list them with where
// each delivery stands (filtered to what is not delivered, in the order recorded, so a catch-up misses
// nothing whatever order deliveries happen in), acknowledge one it handled (its retries stop), or ask
// for one again.
import { z } from 'zod';
import { problem } from '../common/errors.ts';
import { validationProblem } from '../common/validation.ts';
import type { MerchantEvents } from './events.ts';
import type { DeliveryFilter, StoredEvent } from '../storage/outbox.ts';
import { EVENT_ID_PATTERN, typedEventSchema, type MerchantEvent } from '../storage/events.ts';

export const EVENT_LIST_MAX = 100;
export const EVENT_LIST_DEFAULT = 50;
export const DELIVERY_FILTERS = ['undelivered', 'pending', 'failed'] as const satisfies readonly DeliveryFilter[];

export const EventId = z.string().regex(EVENT_ID_PATTERN, 'must be an event id (evt_…)');

/** GET /events' query (strings, as Express parses a query). */
export const EventListQuery = z.strictObject({
  after: EventId.optional(),
  limit: z
    .string()
    .regex(/^\d{1,3}$/, `must be a whole number from 1 to ${EVENT_LIST_MAX}`)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(1, `must be from 1 to ${EVENT_LIST_MAX}`)
        .max(EVENT_LIST_MAX, `must be from 1 to ${EVENT_LIST_MAX}`),
    )
    .default(EVENT_LIST_DEFAULT),
  delivery: z.enum(DELIVERY_FILTERS, { message: `must be one of ${DELIVERY_FILTERS.join(', ')}` }).optional(),
});

/** Where an event's delivery stands, as listed (times ISO 8601 UTC). */
export interface ListedDelivery {
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt?: string;
  deliveredAt?: string;
  acknowledgedBy?: 'endpoint' | 'api';
  lastAttemptAt?: string;
  lastError?: string;
}

/** An event as listed: the envelope the endpoint receives, and `delivery`. */
export type ListedEvent = MerchantEvent & { delivery: ListedDelivery };

export const ListedDeliverySchema = z.strictObject({
  state: z.enum(['pending', 'delivered', 'failed']).meta({
    description:
      '`pending`: being delivered; `delivered`: answered 2xx, or acknowledged; `failed`: given up after the last attempt',
  }),
  attempts: z.int().min(0).meta({ description: 'Attempts made in this delivery (a redelivery starts again from 0)' }),
  nextAttemptAt: z.iso
    .datetime()
    .optional()
    .meta({ description: '`pending`: when the next attempt is due (in the past while one is due or under way)' }),
  deliveredAt: z.iso.datetime().optional().meta({ description: '`delivered`: when' }),
  acknowledgedBy: z
    .enum(['endpoint', 'api'])
    .optional()
    .meta({ description: '`delivered`: by a 2xx from your endpoint, or by POST /events/{eventId}/ack' }),
  lastAttemptAt: z.iso.datetime().optional().meta({ description: 'When the last attempt ended' }),
  lastError: z.string().optional().meta({
    description:
      'Why the last failed attempt failed: `answered 500`, `no answer within 10000 ms`, `connection failed (ECONNREFUSED)`',
  }),
});

/** A listed event (GET /events, and the answer of ack and redeliver). */
export const ListedEventSchema = typedEventSchema({ delivery: ListedDeliverySchema });

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

export function listedEvent(stored: StoredEvent): ListedEvent {
  const { state, attempts, nextAttemptAt, deliveredAt, acknowledgedBy, lastAttemptAt, lastError } = stored.delivery;
  const delivery = Object.fromEntries(
    Object.entries({
      state,
      attempts,
      nextAttemptAt: iso(nextAttemptAt),
      deliveredAt: iso(deliveredAt),
      acknowledgedBy,
      lastAttemptAt: iso(lastAttemptAt),
      lastError,
    }).filter(([, value]) => value !== undefined),
  ) as unknown as ListedDelivery;
  return { ...stored.event, delivery };
}

function requireEvents(events: MerchantEvents, call: string): void {
  if (!events.enabled)
    throw new TypeError(`proxy.${call} needs merchant events on (OBV_EVENTS_URL and OBV_EVENTS_SECRETS)`);
}

/**
 * A page of events in the order recorded. `fieldPrefix` names the query in a problem (`query.` over HTTP).
 * Throws a 400 naming `after` when it is not a retained event.
 */
export async function listEvents(
  events: MerchantEvents,
  query: z.output<typeof EventListQuery>,
  fieldPrefix = '',
): Promise<{ events: ListedEvent[]; hasMore: boolean }> {
  requireEvents(events, 'listEvents');
  const page = await events.list(query);
  if (!page) {
    throw validationProblem('The query', [
      {
        path: `${fieldPrefix}after`,
        message: 'is not a retained event id (unknown, or older than 7 days: list from the start without after)',
      },
    ]);
  }
  return { events: page.events.map(listedEvent), hasMore: page.hasMore };
}

function unknownEvent(eventId: string) {
  return problem('unknown-event', `No event ${eventId} is retained (never recorded, or older than 7 days).`, {
    errors: [{ path: 'eventId', message: 'is not a retained event' }],
  });
}

/** The merchant handled `eventId`: delivered (`acknowledgedBy: "api"`), no attempt follows. Idempotent; 404 for an unknown id. */
export async function acknowledgeEvent(events: MerchantEvents, eventId: string): Promise<ListedEvent> {
  requireEvents(events, 'acknowledgeEvent');
  const stored = await events.acknowledge(eventId);
  if (!stored) throw unknownEvent(eventId);
  return listedEvent(stored);
}

/** An attempt now, whatever the state (a delivered or given-up event is delivered again, same id). 404 for an unknown id. */
export async function redeliverEvent(events: MerchantEvents, eventId: string): Promise<ListedEvent> {
  requireEvents(events, 'redeliverEvent');
  const stored = await events.redeliver(eventId);
  if (!stored) throw unknownEvent(eventId);
  return listedEvent(stored);
}
