// GET /events?after=…&limit=…&delivery=… — the merchant's server catches up on merchant events (its
// endpoint was down, a delivery was lost): retained events in the order recorded, each with where its
// delivery stands, behind the API key. POST /events/{eventId}/ack — one it handled: its retries stop.
// POST /events/{eventId}/redeliver — send one again now. The rules: events/event-list.ts.
import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import type { MerchantEvents } from '../events/events.ts';
import { TypedMerchantEventSchema } from '../storage/events.ts';
import {
  acknowledgeEvent,
  DELIVERY_FILTERS,
  EVENT_LIST_DEFAULT,
  EVENT_LIST_MAX,
  EventId,
  EventListQuery,
  ListedEventSchema,
  listEvents,
  redeliverEvent,
} from '../events/event-list.ts';
import { parseOrThrow } from '../common/validation.ts';
import { REDELIVERIES_PER_EVENT, REDELIVERY_WINDOW_MS } from '../config/limits.ts';
import { COMMON_PROBLEMS, MERCHANT_AUTH_PROBLEMS, type Operation, STORE_PROBLEMS } from '../openapi/operation.ts';

const eventIdParam = {
  eventId: EventId.meta({ description: "The event's id (also the webhook-id header of its deliveries)" }),
};
const EVENT_PROBLEMS = {
  ...MERCHANT_AUTH_PROBLEMS,
  400: 'The event id is malformed (`errors` names `eventId`).',
  404: 'No retained event has this id (never recorded, or older than 7 days: `unknown-event`).',
  ...STORE_PROBLEMS,
  ...COMMON_PROBLEMS,
};

export const eventsOperations: Operation[] = [
  {
    method: 'get',
    path: '/events',
    operationId: 'listEvents',
    summary: 'Catch up on merchant events (your server)',
    description:
      'Retained events (7 days) in the order recorded, each with where its delivery stands. To catch up whatever order ' +
      'deliveries happened in: list with `delivery=undelivered`, handle each event (de-duplicate on its id), acknowledge it ' +
      '(POST /events/{eventId}/ack); page with the last listed id as `after` while `hasMore` is true. ' +
      'Present only when OBV_EVENTS_URL and OBV_MERCHANT_API_KEY are set.',
    caller: 'merchant server',
    security: 'merchantApiKey',
    query: {
      after: {
        description: 'An event id: only events recorded after it (whatever its state)',
        schema: EventListQuery.shape.after,
      },
      limit: {
        description: `1–${EVENT_LIST_MAX}, default ${EVENT_LIST_DEFAULT}`,
        schema: z.string().regex(/^\d{1,3}$/),
      },
      delivery: {
        description:
          '`undelivered` (pending or given up), `pending` or `failed` (given up): only events in those states; default every event',
        schema: z.enum(DELIVERY_FILTERS),
      },
    },
    responses: {
      200: {
        description: 'A page of events',
        content: { 'application/json': z.object({ events: z.array(ListedEventSchema), hasMore: z.boolean() }) },
      },
    },
    problems: {
      ...MERCHANT_AUTH_PROBLEMS,
      400: 'An unknown `after` (or older than the retention), a bad `limit` or `delivery`, or another query field.',
      ...STORE_PROBLEMS,
      ...COMMON_PROBLEMS,
    },
  },
  {
    method: 'post',
    path: '/events/:eventId/ack',
    operationId: 'acknowledgeEvent',
    summary: 'Acknowledge an event you handled: its retries stop (your server)',
    description:
      'The event becomes `delivered` with `acknowledgedBy: "api"` and no attempt follows. Idempotent: an event already ' +
      'delivered stays as it is. No body.',
    caller: 'merchant server',
    security: 'merchantApiKey',
    pathParams: eventIdParam,
    responses: {
      200: { description: 'The event and its delivery, after', content: { 'application/json': ListedEventSchema } },
    },
    problems: EVENT_PROBLEMS,
  },
  {
    method: 'post',
    path: '/events/:eventId/redeliver',
    operationId: 'redeliverEvent',
    summary: 'Send an event again now (your server)',
    description:
      'A delivered or given-up event starts a new delivery (`pending`, the retry schedule from the start), same id and body; ' +
      'a pending one is attempted now. Asking again while an attempt is due or under way changes nothing. ' +
      `At most ${REDELIVERIES_PER_EVENT} asks per event per ${REDELIVERY_WINDOW_MS / 60_000} minutes. No body.`,
    caller: 'merchant server',
    security: 'merchantApiKey',
    pathParams: eventIdParam,
    responses: {
      202: {
        description: 'The event and its delivery, now pending',
        content: { 'application/json': ListedEventSchema },
      },
    },
    problems: {
      ...EVENT_PROBLEMS,
      429:
        `Too many wrong keys from this address, or this event was asked for again ${REDELIVERIES_PER_EVENT} times within ` +
        `${REDELIVERY_WINDOW_MS / 60_000} minutes (\`rate-limited\`, \`Retry-After\` says when it may be asked again).`,
    },
  },
];

const signatureHeader = (description: string) => ({ description, schema: z.string().min(1), required: true });

/** What the proxy POSTs to OBV_EVENTS_URL: the document's `webhooks` (delivery: proxy/events/delivery.ts). */
export const eventWebhooks: Operation[] = [
  {
    method: 'post',
    path: '',
    operationId: 'merchantEvent',
    summary: 'A merchant event, POSTed by the proxy to OBV_EVENTS_URL (your server receives it)',
    description:
      'Standard Webhooks: verify the signature over the exact body before reading it. At least once: de-duplicate on `id`.',
    caller: 'merchant server',
    headers: {
      'webhook-id': signatureHeader("The event's id"),
      'webhook-timestamp': signatureHeader('Unix seconds of this attempt; refuse one too far from now'),
      'webhook-signature': signatureHeader(
        '`v1,<base64 HMAC-SHA256 of {webhook-id}.{webhook-timestamp}.{body}>`, one per secret of OBV_EVENTS_SECRETS, space-separated',
      ),
    },
    body: { contentType: 'application/json', schema: TypedMerchantEventSchema },
    responses: {
      '2XX': { description: 'Delivered' },
      default: { description: 'Anything else, or no answer within 10 s: retried with backoff for about 27.5 hours' },
    },
    problems: {},
  },
];

/** Mounted only when events are on and the merchant API key is set (`merchantAuth`: its check). */
export function eventsRouter(deps: { events: MerchantEvents }, merchantAuth: RequestHandler[]): Router {
  const router = express.Router();
  router.get('/events', ...merchantAuth, async (req, res) => {
    const page = await listEvents(deps.events, parseOrThrow(EventListQuery, req.query, 'The query', 'query'), 'query.');
    res.set('cache-control', 'no-store').json({ events: page.events, hasMore: page.hasMore });
  });
  router.post('/events/:eventId/ack', ...merchantAuth, async (req, res) => {
    const eventId = parseOrThrow(EventId, String(req.params.eventId), 'The path', 'eventId');
    res.set('cache-control', 'no-store').json(await acknowledgeEvent(deps.events, eventId));
  });
  router.post('/events/:eventId/redeliver', ...merchantAuth, async (req, res) => {
    const eventId = parseOrThrow(EventId, String(req.params.eventId), 'The path', 'eventId');
    res
      .status(202)
      .set('cache-control', 'no-store')
      .json(await redeliverEvent(deps.events, eventId));
  });
  return router;
}
