// GET /sessions/:sessionId — the polling fallback and the resume-after-reload path. The session id is
// the capability: only the browser that started the session (and the merchant's server) knows it.
import express, { type Router } from 'express';
import type { ProxyContext } from '../context.ts';
import { NotFoundProblem } from '../errors.ts';
import { ID_PATTERN } from '../sessions/ids.ts';
import { sessionView } from './session-view.ts';

export function sessionsRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  router.get('/sessions/:sessionId', async (req, res) => {
    const sessionId = String(req.params.sessionId);
    const record = ID_PATTERN.test(sessionId) ? await ctx.store.get(sessionId) : undefined;
    if (!record) throw new NotFoundProblem('No verification session has this id (it may have been swept after expiry).');
    res.set('cache-control', 'no-store').json(sessionView(record));
  });
  return router;
}
