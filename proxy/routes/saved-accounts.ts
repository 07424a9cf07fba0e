// The element's saved-account routes (browser-facing, CORS like /verifications), each with the page's
// link token in the body (never in a URL): POST /saved-accounts/offer (what to show: the saved accounts'
// display fields under per-link-session ids, the consent words, an account to reconnect), /use (choose
// one: a link reference at once) and /remove (the shopper removed one). accounts/ does the work.
import express, { type Router } from 'express';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { problem } from '../errors.ts';
import { LINK_TOKEN_PATTERN, resolveLinkSession } from '../link-sessions/link-sessions.ts';
import { createOutcomeDelivery } from '../notifications/delivery.ts';
import { ID_PATTERN } from '../sessions/ids.ts';
import { parseOrThrow } from '../validation.ts';
import { START_BODY_LIMIT } from '../config/limits.ts';
import { offerView } from '../accounts/offer.ts';
import { chooseSavedAccount, findOffered, removeSavedAccount } from '../accounts/choice.ts';

const LinkToken = z.string().regex(LINK_TOKEN_PATTERN, 'must be the linkToken your server got from POST /link-sessions');
const OfferBody = z.strictObject({ linkToken: LinkToken });
const ChoiceBody = z.strictObject({
  linkToken: LinkToken,
  savedAccountId: z.string().regex(ID_PATTERN, 'must be the id of a saved account the offer listed'),
});

export function savedAccountsRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  const deliver = createOutcomeDelivery(ctx);
  const json = express.json({ limit: START_BODY_LIMIT });
  const read = <T extends z.ZodType>(schema: T, req: express.Request): z.output<T> => {
    if (!req.is('application/json')) throw problem('unsupported-media-type', 'The request body must be application/json.');
    return parseOrThrow(schema, req.body, 'The request body');
  };

  router.post('/saved-accounts/offer', json, async (req, res) => {
    const { linkToken } = read(OfferBody, req);
    const { id, session } = await resolveLinkSession(ctx, linkToken);
    res.set('cache-control', 'no-store').json(await offerView(ctx, id, session));
  });

  router.post('/saved-accounts/use', ctx.rateLimiter, json, async (req, res) => {
    const body = read(ChoiceBody, req);
    const linkSession = await resolveLinkSession(ctx, body.linkToken);
    const offered = await findOffered(ctx, linkSession, body.savedAccountId);
    res.status(201).set('cache-control', 'no-store').json(await chooseSavedAccount(ctx, deliver, linkSession, offered));
  });

  router.post('/saved-accounts/remove', ctx.rateLimiter, json, async (req, res) => {
    const body = read(ChoiceBody, req);
    const linkSession = await resolveLinkSession(ctx, body.linkToken);
    await removeSavedAccount(ctx, linkSession, await findOffered(ctx, linkSession, body.savedAccountId));
    res.status(204).end();
  });
  return router;
}
