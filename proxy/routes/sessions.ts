// GET /sessions/:sessionId — the polling fallback and the resume-after-reload path. The session id is
// the capability: only the browser that started the session (and the merchant's server) knows it.
// POST /sessions/:sessionId/cancel — the consumer pressed Cancel at the checkout. The session settles as
// a `CANCELLED` failure (the first terminal outcome wins, so a bank success arriving later is ignored and
// the return page says the link was cancelled instead of "Bank step complete").
import express, { type Router } from 'express';
import type { ProxyContext } from '../context.ts';
import { problem } from '../errors.ts';
import { ID_PATTERN, sessionLogRef } from '../sessions/ids.ts';
import { browserOutcome } from '../sessions/types.ts';
import { CANCELLED_CODE } from './return-page.ts';
import { sessionView } from '../sessions/view.ts';
import { releasedRecord } from '../sessions/bank-step.ts';

export function sessionsRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  const find = async (sessionId: string) => {
    const record = ID_PATTERN.test(sessionId) ? await ctx.store.get(sessionId) : undefined;
    if (!record) throw problem('not-found', 'No verification session has this id (it may have been swept after expiry).');
    return record;
  };

  router.get('/sessions/:sessionId', async (req, res) => {
    const record = await find(String(req.params.sessionId));
    res.set('cache-control', 'no-store').json(sessionView(await releasedRecord(ctx.store, record, ctx.now())));
  });

  router.post('/sessions/:sessionId/cancel', ctx.rateLimiter, async (req, res) => {
    const record = await find(String(req.params.sessionId));
    const outcome = { status: 'failure', code: CANCELLED_CODE, message: 'Cancelled at the checkout.' } as const;
    const { stored, record: after } = await ctx.store.settle(record.sessionId, outcome);
    if (stored) {
      await ctx.bus.publish({ type: 'result', sessionId: record.sessionId, outcome: browserOutcome(outcome, record.language) });
      ctx.logger.info({ session: sessionLogRef(record.sessionId) }, 'verification cancelled at the checkout');
    }
    // Already settled (or expired): the answer says what the session ended as.
    res.set('cache-control', 'no-store').json(sessionView(await releasedRecord(ctx.store, after, ctx.now())));
  });
  return router;
}
