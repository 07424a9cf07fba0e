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
import { COMMON_PROBLEMS, describes, JSON_BODY_PROBLEMS, type Operation, STORE_PROBLEMS } from '../openapi/operation.ts';
import { createVerificationStarter } from '../verifications/start.ts';
import { startOnce } from '../verifications/idempotency.ts';
import { START_BODY_LIMIT } from '../config/limits.ts';

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

/** The answer to a start (sessions/view.ts `startView`). */
export const StartedVerification = describes<ReturnType<typeof startView>>()(z.object({
  sessionId: z.string().regex(ID_PATTERN).meta({ description: 'The session\'s capability: only this browser (and the merchant\'s server) knows it' }),
  consumerUrl: z.url().meta({ description: 'The bank\'s page for the consumer (open it in a new tab)' }),
  expiresAt: z.iso.datetime(),
}));

export const verificationsOperations: Operation[] = [{
  method: 'post',
  path: '/verifications',
  operationId: 'startVerification',
  summary: 'Start a verification (the element)',
  description: 'What the page may send; the proxy fills and checks the rest (README "What the page sends, what the server fills").',
  caller: 'browser',
  headers: { 'Idempotency-Key': { description: 'The same key again answers the first start\'s session (a double click makes one verification)', schema: IdempotencyKey } },
  body: { contentType: 'application/json', schema: StartVerificationBody },
  responses: { 201: { description: 'The verification is started', content: { 'application/json': StartedVerification } } },
  problems: {
    ...JSON_BODY_PROBLEMS,
    403: 'The page\'s origin is not allowed.',
    409: 'A start with this Idempotency-Key keeps failing.',
    422: 'The provider rejected the request (its field list passed on), or the Idempotency-Key was used with another body.',
    429: 'Too many starts from this address.',
    502: 'The provider could not be used.',
    504: 'The provider did not answer in time.',
    ...STORE_PROBLEMS,
    ...COMMON_PROBLEMS,
  },
}];

export function verificationsRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  const start = createVerificationStarter(ctx);
  router.post('/verifications', ctx.rateLimiter, express.json({ limit: START_BODY_LIMIT }), async (req, res) => {
    if (!req.is('application/json')) throw problem('unsupported-media-type', 'The request body must be application/json.');
    const body = parseOrThrow(StartVerificationBody, req.body, 'The request body');
    const rawKey = req.get('idempotency-key');
    if (rawKey === undefined) {
      res.status(201).json(startView(await start(req, body)));
      return;
    }
    const key = parseOrThrow(IdempotencyKey, rawKey, 'The Idempotency-Key header', 'Idempotency-Key');
    const client = req.ip ? plainAddress(req.ip) : '';
    res.status(201).json(startView(await startOnce(ctx, client, key, body, () => start(req, body))));
  });

  return router;
}
