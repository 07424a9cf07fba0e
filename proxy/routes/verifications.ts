// POST /verifications: the browser asks for a verification (verifications/start.ts builds, sends and
// records it), once per Idempotency-Key when the page sends one (verifications/idempotency.ts).
import express, { type Router } from 'express';
import { z } from 'zod';
import { AMOUNT_MESSAGE, AMOUNT_PATTERN } from '../../contracts/amount.ts';
import type { ProxyContext } from '../context.ts';
import { problem } from '../errors.ts';
import { plainAddress } from '../http/client-address.ts';
import { ID_PATTERN } from '../sessions/ids.ts';
import { startView } from '../sessions/view.ts';
import { parseOrThrow, text } from '../validation.ts';
import { createVerificationStarter } from '../verifications/start.ts';
import { startOnce } from '../verifications/idempotency.ts';
import { START_BODY_LIMIT } from '../config/limits.ts';
import { setBankStepCookie } from '../http/bank-step-cookie.ts';

/** What a page may send (CONTRACTS §2). Unknown fields are dropped. */
export const StartVerificationBody = z.object({
  merchantUserId: text(100).optional(),
  merchantTransactionId: text(100).optional(),
  amount: z.string().regex(AMOUNT_PATTERN, AMOUNT_MESSAGE).optional(),
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be a 3-letter ISO 4217 code such as USD').optional(),
  language: z.string().regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a language tag such as en or es-US').optional(),
  /** A link reference from an earlier verification of this merchant user, to re-verify that account. */
  linkRef: z.string().regex(ID_PATTERN, 'must be a link reference from an earlier verification').optional(),
  dataPassThrough: z.string().max(1000).optional(),
  consumer: z
    .object({
      firstName: text(100).optional(),
      lastName: text(100).optional(),
      email: z.email('must be an e-mail address').max(254).optional(),
    })
    .optional(),
});
export type StartVerificationBody = z.infer<typeof StartVerificationBody>;

const IdempotencyKey = z.string().regex(/^[\x21-\x7e]{1,255}$/, 'must be 1-255 visible ASCII characters');

export function verificationsRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  const start = createVerificationStarter(ctx);
  router.post('/verifications', ctx.rateLimiter, express.json({ limit: START_BODY_LIMIT }), async (req, res) => {
    if (!req.is('application/json')) throw problem('unsupported-media-type', 'The request body must be application/json.');
    const body = parseOrThrow(StartVerificationBody, req.body, 'The request body');
    const rawKey = req.get('idempotency-key');
    let record;
    if (rawKey === undefined) {
      record = await start(req, body);
    } else {
      const key = parseOrThrow(IdempotencyKey, rawKey, 'The Idempotency-Key header', 'Idempotency-Key');
      const client = req.ip ? plainAddress(req.ip) : '';
      record = await startOnce(ctx, client, key, body, () => start(req, body));
    }
    setBankStepCookie(res, ctx.config, record, ctx.now());
    res.status(201).json(startView(record));
  });

  return router;
}
