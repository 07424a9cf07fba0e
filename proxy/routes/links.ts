// Link references: what the browser holds instead of the accountToken. Only the merchant's server, with
// its API key, turns one back into the verified account (GET /links/:linkRef) or pays with it
// (POST /transactions). A reference is bound to the user, order and amount it was verified for.
import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { problem } from '../errors.ts';
import { ID_PATTERN } from '../sessions/ids.ts';
import { markerKey } from '../sessions/markers.ts';
import type { SessionRecord, VerificationOutcome } from '../sessions/types.ts';
import { COMMON_PROBLEMS, describes, MERCHANT_AUTH_PROBLEMS, type Operation, STORE_PROBLEMS } from '../openapi/operation.ts';
import { openOutcome } from '../sessions/sealed-outcome.ts';
import { SavedAccountSchema } from '../accounts/saved-account.ts';
import { readPayment } from '../payments/orders.ts';
import type { SavedAccount } from '../accounts/saved-account.ts';
import { requireBankStepConfirmed } from '../sessions/bank-step.ts';

type Success = Extract<VerificationOutcome, { status: 'success' }>;

/** A verified account as the merchant's server reads it: the token, and what it was verified for. */
export interface LinkedAccount {
  linkRef: string;
  accountToken: string;
  accountLabel: string;
  fiName: string;
  fiAccountType: string;
  merchantUserId: string | undefined;
  merchantTransactionId: string | undefined;
  amount: string | undefined;
  currency: string | undefined;
  /** The merchant transaction id this reference paid, once it has. */
  redeemedFor: string | undefined;
  /** The account saved for the user by this link (consent or re-authorization): store it for the next purchase. */
  savedAccount?: SavedAccount;
  /** The stable id of the saved account this reference was made from (the shopper chose it, no bank step). */
  savedAccountId?: string;
}

const LinkedAccountSchema = describes<LinkedAccount>()(z.object({
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
  redeemedFor: z.string().optional().meta({ description: 'The merchantTransactionId this reference paid, once it has' }),
  savedAccount: SavedAccountSchema.optional().meta({ description: 'With the shopper\'s consent: the saved account to store (its `sealed` string), with the consent record' }),
  savedAccountId: z.string().optional().meta({ description: 'When the shopper paid with a saved account: its stable id' }),
}));

export const linksOperations: Operation[] = [{
  method: 'get',
  path: '/links/:linkRef',
  operationId: 'getLinkedAccount',
  summary: 'Read the verified account behind a link reference (your server)',
  description: 'Present only when OBV_MERCHANT_API_KEY is set.',
  caller: 'merchant server',
  security: 'merchantApiKey',
  pathParams: { linkRef: z.string().meta({ description: 'The link reference the element gave the page' }) },
  responses: { 200: { description: 'The verified account, token included', content: { 'application/json': LinkedAccountSchema } } },
  problems: {
    ...MERCHANT_AUTH_PROBLEMS,
    403: 'OBV_BIND_BANK_STEP: the browser that started has not come back from the bank yet (`bank-step-unconfirmed`).',
    404: 'No verified account has this link reference.',
    ...STORE_PROBLEMS,
    ...COMMON_PROBLEMS,
  },
}];

/** The session and successful outcome behind a link reference; 404 (naming `linkRef`) when there is none. */
export async function resolveLinkRef(ctx: ProxyContext, linkRef: string): Promise<{ record: SessionRecord; outcome: Success }> {
  const sessionId = ID_PATTERN.test(linkRef) ? await ctx.store.readMark(markerKey.linkRef(linkRef)) : undefined;
  const record = sessionId === undefined ? undefined : await ctx.store.get(sessionId);
  const outcome = record && openOutcome(ctx.sealer, record);
  if (!record || outcome?.status !== 'success' || outcome.linkRef !== linkRef) {
    throw problem('unknown-link-ref',
      'No verified account has this link reference (it may have expired: keep the account from onOutcome or GET /links for later use).',
      { errors: [{ path: 'linkRef', message: 'is not a known link reference' }] });
  }
  await requireBankStepConfirmed(ctx.store, record, 'linkRef');
  return { record, outcome };
}

/** The order this reference paid, once it has (its order's payment was made with it). */
async function paidOrderOf(ctx: ProxyContext, record: SessionRecord, linkRef: string): Promise<string | undefined> {
  if (record.merchantTransactionId === undefined) return undefined;
  const payment = await readPayment(ctx, record.merchantTransactionId);
  return typeof payment === 'object' && payment.linkRef === linkRef ? payment.merchantTransactionId : undefined;
}

/** `merchantAuth`: the API-key check shared with /transactions (see merchant-auth.ts). */
export function linksRouter(ctx: ProxyContext, merchantAuth: RequestHandler[]): Router {
  const router = express.Router();
  router.get('/links/:linkRef', ...merchantAuth, async (req, res) => {
    const linkRef = String(req.params.linkRef);
    const { record, outcome } = await resolveLinkRef(ctx, linkRef);
    const account: LinkedAccount = {
      linkRef,
      accountToken: outcome.accountToken,
      accountLabel: outcome.accountLabel,
      fiName: outcome.fiName,
      fiAccountType: outcome.fiAccountType,
      merchantUserId: record.merchantUserId,
      merchantTransactionId: record.merchantTransactionId,
      amount: record.amount,
      currency: record.currency,
      redeemedFor: await paidOrderOf(ctx, record, linkRef),
      ...(outcome.savedAccount ? { savedAccount: outcome.savedAccount } : {}),
      ...(record.savedAccountId ? { savedAccountId: record.savedAccountId } : {}),
    };
    res.set('cache-control', 'no-store').json(account);
  });
  return router;
}
