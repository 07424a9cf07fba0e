// GET /healthz — the process answers (liveness). GET /readyz — this instance can take shoppers: the
// session store takes a write (a tiny one: a full disk still answers reads), the provider did not refuse the client credentials at the last token request
// (no token request per probe: see upstream/credential-check.ts), and no shutdown has begun (a load
// balancer stops routing to it when draining).
import express, { type Router } from 'express';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { ProxyMetrics } from '../common/metrics.ts';
import type { SessionStore } from '../storage/sessions.ts';
import type { CredentialState } from '../upstream/credential-check.ts';
import { WarningLimiter } from '../common/log-limits.ts';
import { safeError } from '../common/logger.ts';
import { probeWrite, StoreOutageLog } from '../storage/outage-log.ts';
import { DurabilityError, StorageFullError } from '../storage/errors.ts';
import { type Operation, UNROUTED_PROBLEMS } from '../openapi/operation.ts';

/** What the last token request said of the client credentials (absent until one was made). */
const credentials = z.enum(['checking', 'accepted', 'refused', 'unreachable']);

export const readinessOperations: Operation[] = [
  {
    method: 'get',
    path: '/healthz',
    operationId: 'liveness',
    summary: 'The process answers (liveness)',
    caller: 'operations',
    responses: {
      200: { description: 'Alive', content: { 'application/json': z.object({ status: z.literal('ok') }) } },
    },
    problems: { ...UNROUTED_PROBLEMS },
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'readiness',
    summary: 'This instance can take shoppers (readiness)',
    caller: 'operations',
    responses: {
      200: {
        description: 'The session store takes writes and the provider has not refused the client credentials',
        content: {
          'application/json': z.object({
            status: z.literal('ready'),
            sessionStore: z.literal('ok'),
            credentials: credentials.optional(),
          }),
        },
      },
      503: {
        description:
          'Shutting down, the session store does not answer or its disk is full, or the credentials are being checked or were refused',
        content: {
          'application/json': z.union([
            z.object({ status: z.literal('draining') }),
            z.object({
              status: z.literal('unavailable'),
              sessionStore: z.enum(['unreachable', 'full', 'failed']),
              credentials: credentials.optional(),
            }),
            z.object({
              status: z.enum(['starting', 'unavailable']),
              sessionStore: z.literal('ok'),
              credentials: z.enum(['checking', 'refused']),
            }),
          ]),
        },
      },
    },
    problems: { ...UNROUTED_PROBLEMS },
  },
];

/** What readiness asks: the shutdown's state, the credentials' last known status, a write to the session store. */
export interface ReadinessDeps {
  /** `draining` once shutdown began. */
  lifecycle: { draining: boolean };
  /** What the last token request said of the client credentials, and a way to ask once more. */
  credentials: { state: CredentialState; recheck(): void };
  store: Pick<SessionStore, 'mark'>;
  now: () => number;
  metrics: Pick<ProxyMetrics, 'storeErrors'>;
  storeOutage: StoreOutageLog;
  logger: Logger;
}

export function readinessRouter(deps: ReadinessDeps): Router {
  const router = express.Router();
  const warnings = new WarningLimiter(deps.logger);
  router.get('/healthz', (_req, res) => {
    res.set('cache-control', 'no-store').json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    res.set('cache-control', 'no-store');
    if (deps.lifecycle.draining) {
      res.status(503).json({ status: 'draining' });
      return;
    }
    if (deps.credentials.state.recheckDue) deps.credentials.recheck();
    const { status: credentials } = deps.credentials.state.current;
    // Reported once something was asked; an unchecked proxy (mounted, never checked) says nothing of them.
    const credentialsField = credentials === 'unchecked' ? {} : { credentials };
    try {
      await probeWrite(deps.store, deps.now());
    } catch (error) {
      deps.metrics.storeErrors.inc();
      if (StoreOutageLog.covers(error)) deps.storeOutage.refused('readinessProbes', error);
      else warnings.warn('store', { err: safeError(error) }, 'readiness check: the session store did not answer');
      res.status(503).json({
        status: 'unavailable',
        sessionStore:
          error instanceof StorageFullError ? 'full' : error instanceof DurabilityError ? 'failed' : 'unreachable',
        ...credentialsField,
      });
      return;
    }
    if (credentials === 'checking' || credentials === 'refused') {
      res.status(503).json({
        status: credentials === 'checking' ? 'starting' : 'unavailable',
        sessionStore: 'ok',
        ...credentialsField,
      });
      return;
    }
    res.json({ status: 'ready', sessionStore: 'ok', ...credentialsField });
  });
  return router;
}
