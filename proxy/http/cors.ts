// CORS for the browser-facing routes, against the allow-list. A request carrying a disallowed Origin
// is refused outright (403) rather than merely left without CORS headers: the browser would hide the
// response, but a simple cross-site POST would still have started a verification.
//
// The preflight and the 403 both carry Access-Control-Allow-Origin, so a page missing from
// OBV_ALLOWED_ORIGINS reads a 403 naming the setting instead of failing as a network error ("Connection
// problem"). That lets nothing through: the preflight does no work, and the request itself is refused.
import type { RequestHandler } from 'express';
import { problem } from '../common/errors.ts';
import type { OriginPolicy } from './origin.ts';

const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': 'GET, POST',
  'access-control-allow-headers': 'Content-Type, Idempotency-Key',
  'access-control-max-age': '600',
};

export function cors(policy: OriginPolicy): RequestHandler {
  return (req, res, next) => {
    const origin = req.get('origin');
    res.vary('Origin');
    if (origin === undefined) {
      next();
      return;
    }
    const allowed = policy.check(origin, 'http');
    res.set('access-control-allow-origin', origin);
    if (req.method === 'OPTIONS') {
      res.set(PREFLIGHT_HEADERS).status(204).end();
      return;
    }
    if (!allowed) {
      next(problem('forbidden', "This page's origin is not allowed to use the proxy (add it to OBV_ALLOWED_ORIGINS)."));
      return;
    }
    next();
  };
}
