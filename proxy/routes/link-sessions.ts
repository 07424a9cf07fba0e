// POST /link-sessions — for the merchant's SERVER only (bearer OBV_MERCHANT_API_KEY): the server says who
// is paying for what and gets the opaque link token the page passes to the element
// (link-sessions/link-sessions.ts).
import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import { CreateLinkSessionBody, type CreatedLinkSession, type LinkSessions } from '../link-sessions/link-sessions.ts';
import { LINK_TOKEN_PATTERN } from '../../contracts/link-token.ts';
import {
  COMMON_PROBLEMS,
  JSON_BODY_PROBLEMS,
  MERCHANT_AUTH_PROBLEMS,
  type Operation,
  STORE_PROBLEMS,
} from '../openapi/operation.ts';
import { describes } from '../common/validation.ts';
import { parseJsonBody } from '../common/validation.ts';
import { START_BODY_LIMIT } from '../config/limits.ts';

export const linkSessionsOperations: Operation[] = [
  {
    method: 'post',
    path: '/link-sessions',
    operationId: 'createLinkSession',
    summary: 'Create a link session for one checkout (your server)',
    description:
      'Who pays for what, said by your server; the page gets only the link token (`<obv-link-account link-token>`). ' +
      'With `hosted`, also a hosted page for native apps and links sent by e-mail (docs/HOSTED-LINK.md); a `hosted.completionRedirectUri` ' +
      'the configuration does not allow is a 400 naming it. Present only when OBV_MERCHANT_API_KEY is set. Unknown fields are refused.',
    caller: 'merchant server',
    security: 'merchantApiKey',
    body: { contentType: 'application/json', schema: CreateLinkSessionBody },
    responses: {
      201: {
        description: 'The link session',
        content: {
          'application/json': describes<CreatedLinkSession>()(
            z.object({
              linkToken: z
                .string()
                .regex(LINK_TOKEN_PATTERN)
                .meta({ description: "For the page's element; one purchase" }),
              expiresAt: z.iso.datetime(),
              hostedUrl: z.url().optional().meta({
                description:
                  'With `hosted`: the hosted link page (`{mount}/hosted/{hostedRef}`) to open in the app or send the shopper; it carries no link token',
              }),
            }),
          ),
        },
      },
    },
    problems: { ...MERCHANT_AUTH_PROBLEMS, ...JSON_BODY_PROBLEMS, ...STORE_PROBLEMS, ...COMMON_PROBLEMS },
  },
];

export function linkSessionsRouter(
  deps: { linkSessions: Pick<LinkSessions, 'create'> },
  merchantAuth: RequestHandler[],
): Router {
  const router = express.Router();
  router.post('/link-sessions', ...merchantAuth, express.json({ limit: START_BODY_LIMIT }), async (req, res) => {
    const created = await deps.linkSessions.create(parseJsonBody(CreateLinkSessionBody, req));
    res.status(201).set('cache-control', 'no-store').json(created);
  });
  return router;
}
