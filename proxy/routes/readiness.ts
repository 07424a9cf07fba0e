// GET /healthz — the process answers (liveness). GET /readyz — this instance can take shoppers: the
// session store answers and no shutdown has begun (a load balancer stops routing to it when draining).
import express, { type Router } from 'express';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { WarningLimiter } from '../log-limits.ts';
import { safeError } from '../logger.ts';
import type { Operation } from '../openapi/operation.ts';

export const readinessOperations: Operation[] = [{
  method: 'get',
  path: '/healthz',
  operationId: 'liveness',
  summary: 'The process answers (liveness)',
  caller: 'operations',
  responses: { 200: { description: 'Alive', content: { 'application/json': z.object({ status: z.literal('ok') }) } } },
  problems: {},
}, {
  method: 'get',
  path: '/readyz',
  operationId: 'readiness',
  summary: 'This instance can take shoppers (readiness)',
  caller: 'operations',
  responses: {
    200: { description: 'The session store answers', content: { 'application/json': z.object({ status: z.literal('ready'), sessionStore: z.literal('ok') }) } },
    503: {
      description: 'Shutting down, or the session store does not answer',
      content: {
        'application/json': z.union([
          z.object({ status: z.literal('draining') }),
          z.object({ status: z.literal('unavailable'), sessionStore: z.literal('unreachable') }),
        ]),
      },
    },
  },
  problems: {},
}];

/** An id that can never be a session (ids are 22 base64url characters): reading it exercises the store. */
const PROBE_ID = 'readyz-probe';

export function readinessRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  const warnings = new WarningLimiter(ctx.logger);
  router.get('/healthz', (_req, res) => {
    res.set('cache-control', 'no-store').json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    res.set('cache-control', 'no-store');
    if (ctx.lifecycle.draining) {
      res.status(503).json({ status: 'draining' });
      return;
    }
    try {
      await ctx.store.get(PROBE_ID);
    } catch (error) {
      ctx.metrics.storeErrors.inc();
      warnings.warn('store', { err: safeError(error) }, 'readiness check: the session store did not answer');
      res.status(503).json({ status: 'unavailable', sessionStore: 'unreachable' });
      return;
    }
    res.json({ status: 'ready', sessionStore: 'ok' });
  });
  return router;
}
