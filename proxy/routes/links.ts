// GET /links/:linkRef — for the merchant's SERVER only (its API key): the verified account behind a link
// reference (payments/linked-account.ts), token included.
import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import { COMMON_PROBLEMS, MERCHANT_AUTH_PROBLEMS, type Operation, STORE_PROBLEMS } from '../openapi/operation.ts';
import { describes } from '../common/validation.ts';
import { ReconnectResultSchema, SavedAccountSchema } from '../storage/saved-accounts.ts';
import type { LinkedAccount } from '../payments/linked-account.ts';
import type { Payments } from '../payments/payments.ts';

const LinkedAccountSchema = describes<LinkedAccount>()(
  z.object({
    linkRef: z.string(),
    accountToken: z.string().meta({ description: 'The payment credential: keep it on your server' }),
    accountLabel: z.string(),
    fiName: z.string(),
    fiAccountType: z.string(),
    // Absent when the verification was started without them (sandbox mode lets a page leave them out).
    merchantUserId: z.string().optional(),
    merchantTransactionId: z.string().optional(),
    amount: z.string().optional(),
    currency: z.string().optional(),
    redeemedFor: z
      .string()
      .optional()
      .meta({ description: 'The merchantTransactionId this reference paid, once it has' }),
    savedAccount: SavedAccountSchema.optional().meta({
      description:
        "With the shopper's consent: the saved account to store (its `sealed` string), with the consent record",
    }),
    reconnect: ReconnectResultSchema.optional().meta({
      description:
        "A reconnect's success: the saved account the link session re-authorized, and whether the bank linked another account (then `savedAccount`, if any, is a new saved account and the stale one is unchanged)",
    }),
    savedAccountId: z
      .string()
      .optional()
      .meta({ description: 'When the shopper paid with a saved account: its stable id' }),
  }),
);

export const linksOperations: Operation[] = [
  {
    method: 'get',
    path: '/links/:linkRef',
    operationId: 'getLinkedAccount',
    summary: 'Read the verified account behind a link reference (your server)',
    description: 'Present only when OBV_MERCHANT_API_KEY is set.',
    caller: 'merchant server',
    security: 'merchantApiKey',
    pathParams: { linkRef: z.string().meta({ description: 'The link reference the element gave the page' }) },
    responses: {
      200: {
        description: 'The verified account, token included',
        content: { 'application/json': LinkedAccountSchema },
      },
    },
    problems: {
      ...MERCHANT_AUTH_PROBLEMS,
      403: 'OBV_BIND_BANK_STEP: the browser that started has not come back from the bank yet (`bank-step-unconfirmed`).',
      404: 'No verified account has this link reference.',
      ...STORE_PROBLEMS,
      ...COMMON_PROBLEMS,
    },
  },
];

/** `merchantAuth`: the API-key check shared with /transactions (see http/merchant-auth.ts). */
export function linksRouter(deps: { payments: Pick<Payments, 'readLink'> }, merchantAuth: RequestHandler[]): Router {
  const router = express.Router();
  router.get('/links/:linkRef', ...merchantAuth, async (req, res) => {
    res.set('cache-control', 'no-store').json(await deps.payments.readLink(String(req.params.linkRef)));
  });
  return router;
}
