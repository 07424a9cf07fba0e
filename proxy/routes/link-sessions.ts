// POST /link-sessions — for the merchant's SERVER only (bearer OBV_MERCHANT_API_KEY): the server says who
// is paying for what and gets the opaque link token the page passes to the element
// (link-sessions/link-sessions.ts).
import express, { type RequestHandler, type Router } from 'express';
import type { ProxyContext } from '../context.ts';
import { problem } from '../errors.ts';
import { CreateLinkSessionBody, createLinkSession } from '../link-sessions/link-sessions.ts';
import { parseOrThrow } from '../validation.ts';
import { START_BODY_LIMIT } from '../config/limits.ts';

export function linkSessionsRouter(ctx: ProxyContext, merchantAuth: RequestHandler[]): Router {
  const router = express.Router();
  router.post('/link-sessions', ...merchantAuth, express.json({ limit: START_BODY_LIMIT }), async (req, res) => {
    if (!req.is('application/json')) throw problem('unsupported-media-type', 'The request body must be application/json.');
    const body = parseOrThrow(CreateLinkSessionBody, req.body, 'The request body');
    const created = await createLinkSession(ctx, body);
    ctx.logger.info({ merchantTransactionId: body.merchantTransactionId }, 'link session created');
    res.status(201).set('cache-control', 'no-store').json(created);
  });
  return router;
}
