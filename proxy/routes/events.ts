// GET /events?after=…&limit=… — the merchant's server catches up on merchant events it missed (its
// endpoint was down, a delivery was lost): retained events in the order recorded, behind the API key.
import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { EVENT_ID_PATTERN, MerchantEventSchema } from '../events/shapes.ts';
import { parseOrThrow, validationProblem } from '../validation.ts';

export const EVENT_LIST_MAX = 100;
const EVENT_LIST_DEFAULT = 50;

export const EventListQuery = z.strictObject({
  after: z.string().regex(EVENT_ID_PATTERN, 'must be an event id (evt_…)').optional(),
  limit: z.string().regex(/^\d{1,3}$/, `must be a whole number from 1 to ${EVENT_LIST_MAX}`)
    .transform(Number)
    .pipe(z.number().min(1, `must be from 1 to ${EVENT_LIST_MAX}`).max(EVENT_LIST_MAX, `must be from 1 to ${EVENT_LIST_MAX}`))
    .default(EVENT_LIST_DEFAULT),
});

/** The 200 answer (for the OpenAPI document). */
export const EventListResponse = z.strictObject({ data: z.array(MerchantEventSchema), hasMore: z.boolean() });

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
