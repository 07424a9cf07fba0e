// The element's saved-account routes (browser-facing, CORS like /verifications), each with the page's
// link token in the body (never in a URL): POST /saved-accounts/offer (what to show: the saved accounts'
// display fields under per-link-session ids, the consent words, an account to reconnect), /use (choose
// one: a link reference at once) and /remove (the shopper removed one). accounts/ does the work.
import express, { type Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import { z } from 'zod';
import type { LinkSessions } from '../link-sessions/link-sessions.ts';
import type { Verifications } from '../verifications/verifications.ts';
import { LINK_TOKEN_PATTERN } from '../../contracts/link-token.ts';
import { ID_PATTERN } from '../common/ids.ts';
import { parseJsonBody } from '../common/validation.ts';
import { problem } from '../common/errors.ts';
import type { ProxyConfig } from '../config/schema.ts';
import { SAVED_ACCOUNT_CHOICES_PER_MINUTE, START_BODY_LIMIT, START_RATE_WINDOW_MS } from '../config/limits.ts';
import type { OfferView } from '../accounts/offer.ts';
import { COMMON_PROBLEMS, JSON_BODY_PROBLEMS, type Operation, STORE_PROBLEMS } from '../openapi/operation.ts';
import { describes } from '../common/validation.ts';
import { BrowserOutcomeSchema } from './sessions.ts';

const LinkToken = z
  .string()
  .regex(LINK_TOKEN_PATTERN, 'must be the linkToken your server got from POST /link-sessions');
const OfferBody = z.strictObject({ linkToken: LinkToken });
const ChoiceBody = z.strictObject({
  linkToken: LinkToken,
  savedAccountId: z.string().regex(ID_PATTERN, 'must be the id of a saved account the offer listed'),
});

/** The link reference the hosted page's choice returned (`value` of its element). */
const ConfirmBody = z.strictObject({
  linkRef: z.string().regex(ID_PATTERN, "must be the link reference the saved account's choice returned"),
});

const AccountLine = {
  accountLabel: z.string(),
  fiName: z.string(),
  fiAccountType: z.string(),
  displayLabel: z.string().meta({ description: "The account line as shown, in the link session's language" }),
  spokenLabel: z.string().meta({ description: 'The account line as a screen reader says it' }),
};

/** What the element is offered (accounts/offer.ts `OfferView`): display fields under per-link-session ids, never a sealed value. */
const OfferViewSchema = describes<OfferView>()(
  z.object({
    accounts: z.array(
      z.object({ id: z.string().meta({ description: "The account's id in this link session only" }), ...AccountLine }),
    ),
    words: z.object({
      lang: z.enum(['en', 'es']),
      title: z.string(),
      useAnother: z.string(),
      useSaved: z.string(),
      remove: z.string(),
      removeConfirm: z.string(),
      removed: z.string(),
      keep: z.string(),
      reconnect: z.string(),
      reconnectHint: z.string(),
      offline: z.string(),
      busy: z.string(),
      down: z.string(),
    }),
    saving: z
      .object({
        version: z.string(),
        lang: z.enum(['en', 'es']),
        checkbox: z.string(),
        text: z.string(),
        more: z.string(),
        details: z.string(),
      })
      .optional()
      .meta({ description: "Present when the link session allows saving: the consent box's words and their version" }),
    reconnect: z
      .object(AccountLine)
      .optional()
      .meta({ description: 'Present when the link session re-authorizes a saved account' }),
  }),
);

const LINK_SESSION_PROBLEMS = {
  ...JSON_BODY_PROBLEMS,
  403: "The page's origin is not allowed.",
  404: 'No link session has this token.',
  409: "The link session's order has been paid.",
  410: 'The link token has expired.',
  ...STORE_PROBLEMS,
  ...COMMON_PROBLEMS,
};

export const savedAccountsOperations: Operation[] = [
  {
    method: 'post',
    path: '/saved-accounts/offer',
    operationId: 'offerSavedAccounts',
    summary:
      "What the element offers for a link session: the shopper's saved accounts, consent words, an account to reconnect",
    caller: 'browser',
    body: { contentType: 'application/json', schema: OfferBody },
    responses: { 200: { description: 'The offer', content: { 'application/json': OfferViewSchema } } },
    problems: LINK_SESSION_PROBLEMS,
  },
  {
    method: 'post',
    path: '/saved-accounts/use',
    operationId: 'useSavedAccount',
    summary: 'Pay with a saved account: a link reference for this order at once, no bank step',
    caller: 'browser',
    body: { contentType: 'application/json', schema: ChoiceBody },
    responses: {
      201: { description: "The outcome, as a session's", content: { 'application/json': BrowserOutcomeSchema } },
    },
    problems: {
      ...LINK_SESSION_PROBLEMS,
      404: 'No link session has this token, or it offers no such account.',
      429: 'Too many choices from this address (`rate-limited`), or with this link token (`link-token-exhausted`).',
    },
  },
  {
    method: 'post',
    path: '/saved-accounts/confirm',
    operationId: 'confirmSavedAccount',
    summary:
      'The shopper confirmed the saved account its page chose (the form submit, Continue): released to the merchant then',
    description:
      'A saved account chosen on a page gives the page its link reference at once, but the merchant nothing (no `link.succeeded`, ' +
      '`onOutcome`, payment: 403 `choice-unconfirmed`) until this call, so a page opened and left (a mail scanner) releases nothing. ' +
      "The element calls it at its form's submit and in `confirm()`, the hosted page at Continue.",
    caller: 'browser',
    body: { contentType: 'application/json', schema: ConfirmBody },
    responses: { 204: { description: 'Confirmed (or nothing to confirm)' } },
    problems: {
      ...JSON_BODY_PROBLEMS,
      403: "The page's origin is not allowed.",
      ...STORE_PROBLEMS,
      ...COMMON_PROBLEMS,
      404: 'No saved account was chosen with this link reference (`unknown-link-ref`).',
      429: 'Too many choices from this address.',
    },
  },
  {
    method: 'post',
    path: '/saved-accounts/remove',
    operationId: 'removeSavedAccount',
    summary: "The shopper removed a saved account: no longer offered; the merchant's server is told",
    caller: 'browser',
    body: { contentType: 'application/json', schema: ChoiceBody },
    responses: { 204: { description: 'Removed' } },
    problems: {
      ...LINK_SESSION_PROBLEMS,
      404: 'No link session has this token, or it offers no such account.',
      429: 'Too many choices from this address.',
    },
  },
];

export interface SavedAccountsRouteDeps {
  linkSessions: Pick<LinkSessions, 'offer' | 'removeSavedAccount'>;
  verifications: Pick<Verifications, 'useSavedAccount' | 'confirmSavedAccount'>;
  /** `rateLimit` 0 turns the choices' own per-address limit off, as it does the starts'. */
  config: Pick<ProxyConfig, 'rateLimit'>;
}

export function savedAccountsRouter(deps: SavedAccountsRouteDeps): Router {
  const router = express.Router();
  const json = express.json({ limit: START_BODY_LIMIT });
  // Choices have a limit of their own, far above a shopper's clicks (config/limits.ts); starts keep theirs.
  // OBV_RATE_LIMIT=0 turns both off.
  const choices =
    deps.config.rateLimit === 0
      ? json
      : rateLimit({
          windowMs: START_RATE_WINDOW_MS,
          limit: SAVED_ACCOUNT_CHOICES_PER_MINUTE,
          standardHeaders: 'draft-8',
          legacyHeaders: false,
          handler: (_req, _res, next) =>
            next(problem('rate-limited', 'Too many saved-account choices from this address; try again in a moment.')),
        });

  router.post('/saved-accounts/offer', json, async (req, res) => {
    const { linkToken } = parseJsonBody(OfferBody, req);
    res.set('cache-control', 'no-store').json(await deps.linkSessions.offer(linkToken));
  });

  router.post('/saved-accounts/use', choices, json, async (req, res) => {
    const { linkToken, savedAccountId } = parseJsonBody(ChoiceBody, req);
    res
      .status(201)
      .set('cache-control', 'no-store')
      .json(await deps.verifications.useSavedAccount(linkToken, savedAccountId));
  });

  router.post('/saved-accounts/confirm', choices, json, async (req, res) => {
    const { linkRef } = parseJsonBody(ConfirmBody, req);
    await deps.verifications.confirmSavedAccount(linkRef);
    res.status(204).end();
  });

  router.post('/saved-accounts/remove', choices, json, async (req, res) => {
    const { linkToken, savedAccountId } = parseJsonBody(ChoiceBody, req);
    await deps.linkSessions.removeSavedAccount(linkToken, savedAccountId);
    res.status(204).end();
  });
  return router;
}
