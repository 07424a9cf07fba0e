// POST /verifications: the browser asks for a verification (verifications/start.ts builds, sends and
// records it), once per Idempotency-Key when the page sends one (verifications/idempotency.ts).
import express, { type Router } from 'express';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { problem } from '../errors.ts';
import { plainAddress } from '../http/client-address.ts';
import { ID_PATTERN } from '../sessions/ids.ts';
import { startView } from '../sessions/view.ts';
import { Amount, CurrencyCode, LanguageTag, parseOrThrow, text } from '../validation.ts';
import { LINK_TOKEN_PATTERN } from '../link-sessions/link-sessions.ts';
import { createVerificationStarter } from '../verifications/start.ts';
import { startOnce } from '../verifications/idempotency.ts';
import { START_BODY_LIMIT } from '../config/limits.ts';
import { setBankStepCookie } from '../http/bank-step-cookie.ts';

/** The page's purchase fields: only sandbox mode (or an enrichStart hook) takes them from the page. */
const PageValues = {
  merchantUserId: text(100).optional(),
  merchantTransactionId: text(100).optional(),
  amount: Amount.optional(),
  currency: CurrencyCode.optional(),
  language: LanguageTag.optional(),
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
};

/**
 * What a page may send (CONTRACTS §2): a link token from the merchant's server, alone, or (sandbox mode,
 * or behind an enrichStart hook) the page's own values. Unknown fields are dropped.
 */
export const StartVerificationBody = z.object({
  linkToken: z.string().regex(LINK_TOKEN_PATTERN, 'must be the linkToken your server got from POST /link-sessions').optional(),
  /** The shopper ticked "save this account": the version of the consent words the element showed. */
  consent: z.string().regex(/^[\w.-]{1,40}$/, 'must be the version of the consent words shown').optional(),
  ...PageValues,
}).superRefine((body, ctx) => {
  if (body.linkToken === undefined) {
    if (body.consent !== undefined) ctx.addIssue({ code: 'custom', path: ['consent'], message: 'is only accepted with a linkToken (saving is the link session\'s choice)' });
    return;
  }
  // The link session is the server's word on the purchase: a page value beside it is a bug, never a hint.
  for (const key of Object.keys(PageValues) as (keyof typeof PageValues)[]) {
    if (body[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'must not be sent with linkToken: the link session sets it' });
  }
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
