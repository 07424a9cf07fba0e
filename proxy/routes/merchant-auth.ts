// The merchant server's key (OBV_MERCHANT_API_KEY) on the server-only routes: /transactions and /links.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { UnauthorizedProblem } from '../errors.ts';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Bearer check in constant time (hashing first makes the lengths equal, so length does not leak). */
export function requireApiKey(apiKey: string): RequestHandler {
  const expected = digest(apiKey);
  return (req, _res, next) => {
    const match = /^Bearer (.+)$/.exec(req.get('authorization') ?? '');
    if (!match?.[1] || !timingSafeEqual(digest(match[1]), expected)) {
      next(new UnauthorizedProblem(`${req.method} ${req.baseUrl}${req.path.split('/').slice(0, 2).join('/')} needs Authorization: Bearer <OBV_MERCHANT_API_KEY>.`));
      return;
    }
    next();
  };
}
