// POST /verifications: the browser asks for a verification (verifications/start.ts builds, sends and
// records it), once per Idempotency-Key when the page sends one (verifications/idempotency.ts).
import express, { type Request, type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import type { ProxyConfig } from '../config/schema.ts';
import { plainAddress } from '../http/client-address.ts';
import { ID_PATTERN } from '../common/ids.ts';
import { startView } from '../verifications/view.ts';
import { BANK_STEP_WORDS, type BankStepWords } from '../words/bank-step.ts';
import { IdempotencyKey, parseJsonBody, parseOrThrow } from '../common/validation.ts';
import { COMMON_PROBLEMS, JSON_BODY_PROBLEMS, type Operation, STORE_PROBLEMS } from '../openapi/operation.ts';
import { describes } from '../common/validation.ts';
import type { VerificationDraft } from '../verifications/start.ts';
import type { Verifications } from '../verifications/verifications.ts';
import { StartVerificationBody } from '../verifications/start-body.ts';
import { START_BODY_LIMIT } from '../config/limits.ts';
import { newBankStepBinding, setBankStepCookie } from '../http/bank-step-cookie.ts';

/** One language's words for the states after a start (words/bank-step.ts). */
const BankStepWordsSchema = z.object(
  Object.fromEntries(Object.keys(BANK_STEP_WORDS.en).map((key) => [key, z.string()])) as Record<
    keyof BankStepWords,
    z.ZodString
  >,
);

/** The answer to a start (verifications/view.ts `startView`). */
export const StartedVerification = describes<ReturnType<typeof startView>>()(
  z.object({
    sessionId: z
      .string()
      .regex(ID_PATTERN)
      .meta({ description: "The session's capability: only this browser (and the merchant's server) knows it" }),
    consumerUrl: z.url().meta({ description: "The bank's page for the consumer (open it in a new tab)" }),
    expiresAt: z.iso.datetime(),
    words: z.object({ en: BankStepWordsSchema, es: BankStepWordsSchema }).meta({
      description:
        "The element's words for the states after a start (waiting, blocked or closed tab, lost connection, outcome titles and buttons), per language: the element shows those of its own language",
    }),
  }),
);

export const verificationsOperations: Operation[] = [
  {
    method: 'post',
    path: '/verifications',
    operationId: 'startVerification',
    summary: 'Start a verification (the element)',
    description:
      'What the page may send; the proxy fills and checks the rest (docs/PROXY.md "What the page sends, what the server fills").',
    caller: 'browser',
    headers: {
      'Idempotency-Key': {
        description: "The same key again answers the first start's session (a double click makes one verification)",
        schema: IdempotencyKey,
      },
    },
    body: { contentType: 'application/json', schema: StartVerificationBody },
    responses: {
      201: { description: 'The verification is started', content: { 'application/json': StartedVerification } },
    },
    problems: {
      ...JSON_BODY_PROBLEMS,
      400:
        'A field is missing or invalid (`errors` names each one), or a purchase field the link session sets; ' +
        'a start without a link token (`link-session-required`) unless an enrichStart hook is configured.',
      403: "The page's origin is not allowed, or (OBV_BIND_BANK_STEP) the page is not on OBV_PUBLIC_URL's origin (`bank-step-unbindable`).",
      404: 'No link session has this link token (`unknown-link-token`).',
      409: 'The link token already linked an account (`link-token-used`), or a start with this Idempotency-Key keeps failing.',
      410: 'The link token has expired (`link-token-expired`).',
      422: 'The provider rejected the request (its field list passed on), or the Idempotency-Key was used with another body.',
      429: 'Too many starts from this address, or from this link token (`link-token-exhausted`).',
      502: 'The provider could not be used.',
      504: 'The provider did not answer in time.',
      ...STORE_PROBLEMS,
      ...COMMON_PROBLEMS,
    },
  },
];

/**
 * Lets the merchant's code name the purchase of a start without a link token from its own session
 * (consumer details, the amount in the cart, its user id) before it is validated and sent: the draft
 * holds only the proxy's defaults (an `obv-…` order id, USD, the element's language). Return the
 * request to send.
 * `merchant.returnURL`, `merchant.notificationURL` and `countryCode` are set again afterwards. To
 * re-verify an account the merchant keeps, set `accountToken` here (the page can never send one).
 */
export type EnrichStart = (req: Request, request: VerificationDraft) => VerificationDraft | Promise<VerificationDraft>;

export interface VerificationsRouteDeps {
  verifications: Pick<Verifications, 'start'>;
  config: Pick<ProxyConfig, 'bindBankStep' | 'publicUrl' | 'mountPath'>;
  /** Per-client-IP limit on starts (a pass-through when OBV_RATE_LIMIT=0). */
  rateLimiter: RequestHandler;
  enrichStart?: EnrichStart | undefined;
  now: () => number;
}

export function verificationsRouter(deps: VerificationsRouteDeps): Router {
  const router = express.Router();
  const { enrichStart } = deps;
  router.post('/verifications', deps.rateLimiter, express.json({ limit: START_BODY_LIMIT }), async (req, res) => {
    const body = parseJsonBody(StartVerificationBody, req);
    // Before any work: a start the binding cookie cannot reach is refused (403).
    const binding = newBankStepBinding(deps.config, req);
    const rawKey = req.get('idempotency-key');
    const idempotencyKey =
      rawKey === undefined
        ? undefined
        : parseOrThrow(IdempotencyKey, rawKey, 'The Idempotency-Key header', 'Idempotency-Key');
    const record = await deps.verifications.start({
      body,
      client: { address: req.ip ? plainAddress(req.ip) : undefined, userAgent: req.get('user-agent') },
      browserBinding: binding?.binding,
      enrich: enrichStart && ((draft) => enrichStart(req, draft)),
      idempotencyKey,
    });
    setBankStepCookie(res, deps.config, record, deps.now(), binding);
    res.status(201).json(startView(record));
  });
  return router;
}
