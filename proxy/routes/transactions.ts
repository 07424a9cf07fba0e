// POST /transactions — for the merchant's SERVER only (bearer OBV_MERCHANT_API_KEY): calls endpoint 4
// with the verified accountToken and passes the provider's answer through.
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type RequestHandler, type Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { TooManyRequestsProblem, UnauthorizedProblem, UnsupportedMediaTypeProblem } from '../errors.ts';
import type { TransactionClient } from '../upstream/transaction-client.ts';
import { parseOrThrow } from './problem.ts';

const text = (max: number) => z.string().trim().min(1).max(max);

/** CONTRACTS §3, plus the other merchant ids; unknown fields pass through to the provider. */
export const SubmitTransactionBody = z.looseObject({
  accountToken: text(512),
  merchantTransactionId: text(128),
  merchantUserId: text(128).optional(),
  product: text(64).optional(),
  language: text(35).optional(),
  transactionRegion: text(64).optional(),
  dataPassThrough: z.string().max(1024).optional(),
  originatorIp: z.union([z.ipv4(), z.ipv6()]).optional(),
});

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Bearer check in constant time (hashing first makes the lengths equal, so length does not leak). */
function requireApiKey(apiKey: string): RequestHandler {
  const expected = digest(apiKey);
  return (req, _res, next) => {
    const match = /^Bearer (.+)$/.exec(req.get('authorization') ?? '');
    if (!match?.[1] || !timingSafeEqual(digest(match[1]), expected)) {
      next(new UnauthorizedProblem('POST /transactions needs Authorization: Bearer <OBV_MERCHANT_API_KEY>.'));
      return;
    }
    next();
  };
}

/** Window of the failed-key limit. */
const AUTH_FAILURE_WINDOW_MS = 15 * 60_000;

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
    handler: (_req, _res, next) => next(new TooManyRequestsProblem('Too many failed API-key attempts from this address; try again later.')),
  });
}

export function transactionsRouter(ctx: ProxyContext, client: TransactionClient, apiKey: string): Router {
  const router = express.Router();
  const { config } = ctx;
  router.post('/transactions', limitFailedKeys(config.authFailureLimit), requireApiKey(apiKey), express.json({ limit: '16kb' }), async (req, res) => {
    if (!req.is('application/json')) throw new UnsupportedMediaTypeProblem('application/json');
    const body = parseOrThrow(SubmitTransactionBody, req.body, 'The request body');
    const { accountToken, merchantTransactionId, merchantUserId, product, language, transactionRegion, dataPassThrough, originatorIp, ...rest } = body;
    const result = await client.submit({
      ...rest,
      product: product ?? config.product,
      countryCode: 'US',
      transactionRegion: transactionRegion ?? config.transactionRegion,
      language,
      dataPassThrough,
      // The caller is the merchant's server, so its address is not the consumer's: only what it sends.
      originatorIp,
      merchant: { merchantId: config.merchantId, merchantUserId, merchantTransactionId, merchantSubId: config.merchantSubId },
      accountToken,
    });
    ctx.logger.info({ merchantTransactionId, status: result.status }, 'interactive transaction submitted');
    res.status(result.status).set('cache-control', 'no-store').json(result.body);
  });
  return router;
}
