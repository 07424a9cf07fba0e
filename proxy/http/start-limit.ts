// The per-client-address limit on starts (OBV_RATE_LIMIT per minute), shared by the routes that make a
// session or call the merchant: POST /verifications, /sessions/cancel, /saved-accounts/use and /remove.
import type { RequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { problem } from '../common/errors.ts';
import type { ProxyMetrics } from '../common/metrics.ts';
import { START_RATE_WINDOW_MS } from '../config/limits.ts';

/** The limiter; a pass-through when `limit` is 0. `store`: the storage's (Redis: shared by every instance); default in memory. */
export function startLimit(options: {
  limit: number;
  store?: Store | undefined;
  metrics: Pick<ProxyMetrics, 'starts'>;
}): RequestHandler {
  const { limit, store, metrics } = options;
  if (limit <= 0) return (_req, _res, next) => next();
  return rateLimit({
    windowMs: START_RATE_WINDOW_MS,
    limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    ...(store ? { store } : {}),
    handler: (_req, _res, next) => {
      metrics.starts.inc({ result: 'rate-limited' });
      next(problem('rate-limited', 'Too many verification requests from this address; try again later.'));
    },
  });
}
