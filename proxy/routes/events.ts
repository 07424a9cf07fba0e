// GET /events?after=…&limit=… — the merchant's server catches up on merchant events it missed (its
// endpoint was down, a delivery was lost): retained events in the order recorded, behind the API key.
import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { EVENT_ID_PATTERN, TypedMerchantEventSchema } from '../events/shapes.ts';
import { parseOrThrow, validationProblem } from '../validation.ts';
import { COMMON_PROBLEMS, MERCHANT_AUTH_PROBLEMS, type Operation, STORE_PROBLEMS } from '../openapi/operation.ts';

export const EVENT_LIST_MAX = 100;
const EVENT_LIST_DEFAULT = 50;

export const EventListQuery = z.strictObject({
  after: z.string().regex(EVENT_ID_PATTERN, 'must be an event id (evt_…)').optional(),
  limit: z.string().regex(/^\d{1,3}$/, `must be a whole number from 1 to ${EVENT_LIST_MAX}`)
    .transform(Number)
    .pipe(z.number().min(1, `must be from 1 to ${EVENT_LIST_MAX}`).max(EVENT_LIST_MAX, `must be from 1 to ${EVENT_LIST_MAX}`))
    .default(EVENT_LIST_DEFAULT),
});

export const eventsOperations: Operation[] = [{
  method: 'get',
  path: '/events',
  operationId: 'listEvents',
  summary: 'Catch up on merchant events (your server)',
  description: 'Retained events (7 days), oldest first. Poll with the last id you saw as `after` until `hasMore` is false. '
    + 'Present only when OBV_EVENTS_URL and OBV_MERCHANT_API_KEY are set.',
  caller: 'merchant server',
  security: 'merchantApiKey',
  query: {
    after: { description: 'An event id: only events recorded after it', schema: EventListQuery.shape.after },
    limit: { description: `1–${EVENT_LIST_MAX}, default ${EVENT_LIST_DEFAULT}`, schema: z.string().regex(/^\d{1,3}$/) },
  },
  responses: {
    200: {
      description: 'A page of events',
      content: { 'application/json': z.object({ data: z.array(TypedMerchantEventSchema), hasMore: z.boolean() }) },
    },
  },
  problems: { ...MERCHANT_AUTH_PROBLEMS, 400: 'An unknown `after` (or older than the retention), a bad `limit`, or another query field.', ...STORE_PROBLEMS, ...COMMON_PROBLEMS },
}];

const signatureHeader = (description: string) => ({ description, schema: z.string().min(1), required: true });

/** What the proxy POSTs to OBV_EVENTS_URL: the document's `webhooks` (delivery: proxy/events/delivery.ts). */
export const eventWebhooks: Operation[] = [{
  method: 'post',
  path: '',
  operationId: 'merchantEvent',
  summary: 'A merchant event, POSTed by the proxy to OBV_EVENTS_URL (your server receives it)',
  description: 'Standard Webhooks: verify the signature over the exact body before reading it. At least once: de-duplicate on `id`.',
  caller: 'merchant server',
  headers: {
    'webhook-id': signatureHeader('The event\'s id'),
    'webhook-timestamp': signatureHeader('Unix seconds of this attempt; refuse one too far from now'),
    'webhook-signature': signatureHeader('`v1,<base64 HMAC-SHA256 of {webhook-id}.{webhook-timestamp}.{body}>`, one per secret of OBV_EVENTS_SECRETS, space-separated'),
  },
  body: { contentType: 'application/json', schema: TypedMerchantEventSchema },
  responses: {
    '2XX': { description: 'Delivered' },
    default: { description: 'Anything else, or no answer within 10 s: retried with backoff for about 27.5 hours' },
  },
  problems: {},
}];

/** Mounted only when events are on and the merchant API key is set (`merchantAuth`: its check). */
export function eventsRouter(ctx: ProxyContext, merchantAuth: RequestHandler[]): Router {
  const router = express.Router();
  router.get('/events', ...merchantAuth, async (req, res) => {
    const query = parseOrThrow(EventListQuery, req.query, 'The query', 'query');
    const page = await ctx.events.list(query.after, query.limit);
    if (!page) {
      throw validationProblem('The query', [{ path: 'query.after', message: 'is not a retained event id (unknown, or older than 7 days: list from the start without after)' }]);
    }
    res.set('cache-control', 'no-store').json({ data: page.events, hasMore: page.hasMore });
  });
  return router;
}
