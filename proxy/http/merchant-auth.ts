// The merchant server's key (OBV_MERCHANT_API_KEY) on the server-only routes: /transactions and /links.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { problem } from '../errors.ts';
import { AUTH_FAILURE_WINDOW_MS } from '../config/limits.ts';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Bearer check in constant time (hashing first makes the lengths equal, so length does not leak). */
function requireApiKey(apiKey: string): RequestHandler {
  const expected = digest(apiKey);
  return (req, _res, next) => {
    const match = /^Bearer (.+)$/.exec(req.get('authorization') ?? '');
    if (!match?.[1] || !timingSafeEqual(digest(match[1]), expected)) {
      next(problem('unauthorized', `${req.method} ${req.baseUrl}${req.path.split('/').slice(0, 2).join('/')} needs Authorization: Bearer <OBV_MERCHANT_API_KEY>.`));
      return;
    }
    next();
  };
}

/**
 * Counts only refused keys (401s) per client address; past `limit` in the window every request from
 * that address is answered 429, the right key included, so the limit cannot be used as an oracle.
 * Per instance (in memory): with several instances each allows `limit`.
 */
function limitFailedKeys(limit: number): RequestHandler {
  if (limit === 0) return (_req, _res, next) => next();
  return rateLimit({
    windowMs: AUTH_FAILURE_WINDOW_MS,
    limit,
    skipSuccessfulRequests: true,
    requestWasSuccessful: (_req, res) => res.statusCode !== 401,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    handler: (_req, _res, next) => next(problem('rate-limited', 'Too many failed API-key attempts from this address; try again later.')),
  });
}

/** The guard of every server-only route, built once so /transactions and /links share one failed-key budget. */
export function merchantAuth(apiKey: string, failureLimit: number): RequestHandler[] {
  return [limitFailedKeys(failureLimit), requireApiKey(apiKey)];
}
