// What a page may send to POST /verifications, below both the route that parses it and the starter that
// uses it (verifications/start.ts).
import { z } from 'zod';
import { LanguageTag } from '../common/validation.ts';
import { LINK_TOKEN_PATTERN } from '../../contracts/link-token.ts';

/**
 * The purchase fields: the merchant's server sets them in the link session (or its enrichStart hook does),
 * never the page. A start body that carries one is refused, naming it.
 */
const setByLinkSession = z
  .never({ error: 'must not be sent: the link session sets it (POST /link-sessions on your server)' })
  .optional()
  .meta({ description: 'Refused: the link session sets it' });

/**
 * What a page may send (CONTRACTS §2): a link token from the merchant's server (with `consent` when the
 * shopper ticked "save"), or, for the merchant's enrichStart hook to complete, at most the shopper's
 * language. Unknown fields are dropped.
 */
export const StartVerificationBody = z
  .object({
    linkToken: z
      .string()
      .regex(LINK_TOKEN_PATTERN, 'must be the linkToken your server got from POST /link-sessions')
      .optional(),
    /** The shopper ticked "save this account": the version of the consent words the element showed. */
    consent: z
      .string()
      .regex(/^[\w.-]{1,40}$/, 'must be the version of the consent words shown')
      .optional(),
    /**
     * The shopper chose "Use another account" rather than reconnect the saved account the link session
     * re-authorizes: a plain link (the stale account's token is not sent upstream). Ignored otherwise.
     */
    another: z.literal(true).optional().meta({
      description: 'The shopper chose another account instead of reconnecting the one the link session re-authorizes',
    }),
    /** Without a link token: the shopper's language, for the enrichStart hook's request. */
    language: LanguageTag.optional(),
    merchantUserId: setByLinkSession,
    merchantTransactionId: setByLinkSession,
    amount: setByLinkSession,
    currency: setByLinkSession,
    dataPassThrough: setByLinkSession,
    consumer: setByLinkSession,
  })
  .superRefine(
    (body, ctx) => {
      if (body.linkToken === undefined) {
        if (body.consent !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['consent'],
            message: "is only accepted with a linkToken (saving is the link session's choice)",
          });
        if (body.another !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['another'],
            message: "is only accepted with a linkToken (a reconnect is the link session's)",
          });
      } else if (body.language !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['language'],
          message: 'must not be sent with linkToken: the link session sets it',
        });
      }
      // Also beside a refused purchase field, so one 400 names every field to drop.
    },
    { when: ({ value }) => typeof value === 'object' && value !== null && !Array.isArray(value) },
  );
export type StartVerificationBody = z.infer<typeof StartVerificationBody>;
