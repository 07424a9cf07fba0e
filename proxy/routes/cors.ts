// CORS for the browser-facing routes, against the allow-list. A request carrying a disallowed Origin
// is refused outright (403) rather than merely left without CORS headers: the browser would hide the
// response, but a simple cross-site POST would still have started a verification.
import type { RequestHandler } from 'express';
import { ForbiddenProblem } from '../errors.ts';
import type { OriginPolicy } from '../origin.ts';

export function cors(policy: OriginPolicy): RequestHandler {
  return (req, res, next) => {
    const origin = req.get('origin');
    res.vary('Origin');
    if (origin === undefined) {
      next();
      return;
    }
    if (!policy.allows(origin, req.get('host'), req.protocol)) {
      next(new ForbiddenProblem(`Origin ${origin} is not allowed (OBV_ALLOWED_ORIGINS).`));
      return;
    }
    res.set('access-control-allow-origin', origin);
    if (req.method === 'OPTIONS') {
      res.set({
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'Content-Type, Idempotency-Key',
        'access-control-max-age': '600',
      });
      res.status(204).end();
      return;
    }
    next();
  };
}
