// POST /sessions/lookup {sessionId} — the polling fallback and the resume-after-reload path. The session id
// is the capability: only the browser that started the session (and the merchant's server) knows it.
// POST /sessions/cancel {sessionId} — the consumer pressed Cancel at the checkout. The session settles as
// a `CANCELLED` failure (the first terminal outcome wins, so a bank success arriving later is ignored and
// the return page says the link was cancelled instead of "Bank step complete"), and the merchant hears
// `link.cancelled` (or whichever event the session ended with, for a session that ended before).
// The id travels in the body, never in the URL: reverse proxies, CDNs, APM agents and access logs record
// URLs whole, and the id reads the outcome and can cancel.
import express, { type Router } from 'express';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { problem } from '../errors.ts';
import { ID_PATTERN, sessionLogRef } from '../sessions/ids.ts';
import { browserOutcome } from '../sessions/types.ts';
import { CANCELLED_CODE } from './return-page.ts';
import { sessionView } from '../sessions/view.ts';
import { releasedRecord } from '../sessions/bank-step.ts';
import { parseOrThrow } from '../validation.ts';

/** What the element sends to read or cancel its session (CONTRACTS §2). */
export const SessionRequestBody = z.strictObject({
  sessionId: z.string().regex(ID_PATTERN, 'must be the sessionId the start answered'),
});

/** The bodies are one id: a few hundred bytes is plenty. */
const SESSION_BODY_LIMIT = '1kb';

export function sessionsRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  const readBody = express.json({ limit: SESSION_BODY_LIMIT });
  /** The session named by the request's JSON body; 400 naming the field, 404 when there is none. */
  const find = async (req: express.Request) => {
    if (!req.is('application/json')) throw problem('unsupported-media-type', 'The request body must be application/json.');
    const { sessionId } = parseOrThrow(SessionRequestBody, req.body, 'The request body');
    const record = await ctx.store.get(sessionId);
    if (!record) throw problem('not-found', 'No verification session has this id (it may have been swept after expiry).');
    return record;
  };

  router.post('/sessions/lookup', readBody, async (req, res) => {
    const record = await find(req);
    res.set('cache-control', 'no-store').json(sessionView(await releasedRecord(ctx.store, record, ctx.now())));
  });

  router.post('/sessions/cancel', ctx.rateLimiter, readBody, async (req, res) => {
    const record = await find(req);
    const outcome = { status: 'failure', code: CANCELLED_CODE, message: 'Cancelled at the checkout.' } as const;
    const { stored, record: after } = await ctx.store.settle(record.sessionId, outcome);
    if (stored) {
      await ctx.bus.publish({ type: 'result', sessionId: record.sessionId, outcome: browserOutcome(outcome, record.language) });
      ctx.logger.info({ session: sessionLogRef(record.sessionId) }, 'verification cancelled at the checkout');
    }
    // Also when this call did not store it: a cancel retried after a failed emit records it now (once per session).
    await ctx.events.sessionEnded(after);
    // Already settled (or expired): the answer says what the session ended as.
    res.set('cache-control', 'no-store').json(sessionView(await releasedRecord(ctx.store, after, ctx.now())));
  });
  return router;
}
