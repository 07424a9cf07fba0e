// POST /sessions/lookup {sessionId} — the polling fallback and the resume-after-reload path. The session id
// is the capability: only the browser that started the session (and the merchant's server) knows it.
// POST /sessions/cancel {sessionId} — the consumer pressed Cancel at the checkout. The session settles as
// a `CANCELLED` failure (the first terminal outcome wins, so a bank success arriving later is ignored and
// the return page says the link was cancelled instead of "Bank step complete"), and the merchant hears
// `link.cancelled` (or whichever event the session ended with, for a session that ended before).
// The id travels in the body, never in the URL: reverse proxies, CDNs, APM agents and access logs record
// URLs whole, and the id reads the outcome and can cancel.
import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import { ID_PATTERN } from '../common/ids.ts';
import type { Verifications } from '../verifications/verifications.ts';
import type { SessionView } from '../verifications/view.ts';
import { parseJsonBody } from '../common/validation.ts';
import { COMMON_PROBLEMS, JSON_BODY_PROBLEMS, type Operation, STORE_PROBLEMS } from '../openapi/operation.ts';
import { describes } from '../common/validation.ts';

/** What the element sends to read or cancel its session (CONTRACTS §2). */
export const SessionRequestBody = z.strictObject({
  sessionId: z.string().regex(ID_PATTERN, 'must be the sessionId the start answered'),
});

/** What the browser sees of an outcome (storage/result-bus.ts `BrowserOutcome`): never the accountToken. */
export const BrowserOutcomeSchema = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('success'),
    linkRef: z
      .string()
      .regex(ID_PATTERN)
      .meta({ description: "What the merchant's server pays with (POST /transactions)" }),
    accountLabel: z.string(),
    fiName: z.string(),
    fiAccountType: z.string(),
    displayLabel: z.string().meta({ description: "The account line as shown, in the verification's language" }),
    spokenLabel: z.string().meta({ description: 'The account line as a screen reader says it' }),
    note: z.string().optional().meta({
      description:
        'For a returning shopper: the account will be saved, was reconnected, or is another than the one to reconnect (shown under the account)',
    }),
  }),
  z.object({
    status: z.literal('failure'),
    code: z.string(),
    message: z.string().meta({ description: "The provider's message (for developers)" }),
    text: z.string().meta({ description: "The shopper's words for this failure" }),
    lang: z.string().meta({ description: 'The language `text` is written in' }),
  }),
]);

/** A session as the browser sees it (verifications/view.ts). */
export const SessionViewSchema = describes<SessionView>()(
  z.object({
    sessionId: z.string().regex(ID_PATTERN),
    state: z.enum(['pending', 'returned', 'succeeded', 'failed', 'expired']),
    expiresAt: z.iso.datetime(),
    outcome: BrowserOutcomeSchema.optional(),
  }),
);

const SESSION_PROBLEMS = {
  ...JSON_BODY_PROBLEMS,
  403: "The page's origin is not allowed.",
  404: 'No session has this id (it may have been swept after expiry).',
  ...STORE_PROBLEMS,
  ...COMMON_PROBLEMS,
};

export const sessionsOperations: Operation[] = [
  {
    method: 'post',
    path: '/sessions/lookup',
    operationId: 'lookupSession',
    summary: 'Read a session (the element polls it and resumes with it)',
    description: 'The id travels in the body, never in the URL.',
    caller: 'browser',
    body: { contentType: 'application/json', schema: SessionRequestBody },
    responses: { 200: { description: 'The session', content: { 'application/json': SessionViewSchema } } },
    problems: SESSION_PROBLEMS,
  },
  {
    method: 'post',
    path: '/sessions/cancel',
    operationId: 'cancelSession',
    summary: 'Cancel at the checkout: the session settles as the failure CANCELLED',
    description: 'Already settled (or expired), the answer says what the session ended as.',
    caller: 'browser',
    body: { contentType: 'application/json', schema: SessionRequestBody },
    responses: {
      200: { description: 'The session after the cancel', content: { 'application/json': SessionViewSchema } },
    },
    problems: { ...SESSION_PROBLEMS, 429: 'Too many requests from this address.' },
  },
];

/** The bodies are one id: a few hundred bytes is plenty. */
const SESSION_BODY_LIMIT = '1kb';

export interface SessionsRouteDeps {
  verifications: Pick<Verifications, 'lookup' | 'cancel'>;
  /** Per-client-IP limit (shared with the starts): a cancel is a write. */
  rateLimiter: RequestHandler;
}

export function sessionsRouter(deps: SessionsRouteDeps): Router {
  const router = express.Router();
  const readBody = express.json({ limit: SESSION_BODY_LIMIT });

  router.post('/sessions/lookup', readBody, async (req, res) => {
    const { sessionId } = parseJsonBody(SessionRequestBody, req);
    res.set('cache-control', 'no-store').json(await deps.verifications.lookup(sessionId));
  });

  router.post('/sessions/cancel', deps.rateLimiter, readBody, async (req, res) => {
    const { sessionId } = parseJsonBody(SessionRequestBody, req);
    res.set('cache-control', 'no-store').json(await deps.verifications.cancel(sessionId));
  });
  return router;
}
