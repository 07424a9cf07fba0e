// POST /transactions — for the merchant's SERVER only (bearer OBV_MERCHANT_API_KEY): redeems a link
// reference for the interactive transaction (endpoint 4). The proxy looks the accountToken up in the
// stored outcome; the reference pays only for the user, order and amount it was verified for, and only
// once. The provider's answer is passed through.
import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import { AMOUNT_MESSAGE, AMOUNT_PATTERN } from '../../contracts/amount.ts';
import type { ProxyContext } from '../context.ts';
import { problem, type ProblemError } from '../errors.ts';
import { ID_PATTERN, newId, sessionLogRef } from '../sessions/ids.ts';
import { markerKey, sessionMarkerTtlMs } from '../sessions/markers.ts';
import { TokenError, UpstreamHttpError, UpstreamUnreachableError } from '../upstream/errors.ts';
import { connectionNeverEstablished } from '../upstream/http.ts';
import type { TransactionClient } from '../upstream/transaction-client.ts';
import { redeemedOrder, resolveLinkRef } from './links.ts';
import { parseOrThrow, text } from '../validation.ts';
import { TRANSACTION_BODY_LIMIT } from '../config/limits.ts';
import { COMMON_PROBLEMS, JSON_BODY_PROBLEMS, MERCHANT_AUTH_PROBLEMS, type Operation, STORE_PROBLEMS } from '../openapi/operation.ts';

/** CONTRACTS §3; unknown fields pass through to the provider. */
export const SubmitTransactionBody = z.looseObject({
  linkRef: z.string().regex(ID_PATTERN, 'must be the link reference the element gave the page'),
  merchantUserId: text(128),
  merchantTransactionId: text(128),
  /** When sent, must equal the amount the account was verified for. */
  amount: z.string().regex(AMOUNT_PATTERN, AMOUNT_MESSAGE).optional(),
  product: text(64).optional(),
  language: text(35).optional(),
  transactionRegion: text(64).optional(),
  dataPassThrough: z.string().max(1024).optional(),
  originatorIp: z.union([z.ipv4(), z.ipv6()]).optional(),
});

/** The provider's answer, passed through: these fields as the sandbox sends them, and whatever else the provider adds. */
const ProviderTransactionAnswer = z.looseObject({
  transactionId: z.string().optional(),
  transactionStatus: z.string().optional().meta({ description: '`APPROVED` when the payment went through' }),
  merchantTransactionId: z.string().optional(),
});

export const transactionsOperations: Operation[] = [{
  method: 'post',
  path: '/transactions',
  operationId: 'submitTransaction',
  summary: 'Pay with a link reference (your server)',
  description: 'Endpoint 4 with the stored accountToken, for the user, order and amount the reference was verified for, once. '
    + 'Present only when OBV_MERCHANT_API_KEY is set. Unknown fields pass through to the provider.',
  caller: 'merchant server',
  security: 'merchantApiKey',
  body: { contentType: 'application/json', schema: SubmitTransactionBody },
  responses: {
    '2XX': { description: 'The provider\'s answer, passed through', content: { 'application/json': ProviderTransactionAnswer } },
    '4XX': { description: 'The provider refused the transaction: its answer, passed through (the reference may be used again)', content: { 'application/json': ProviderTransactionAnswer } },
  },
  problems: {
    ...MERCHANT_AUTH_PROBLEMS,
    ...JSON_BODY_PROBLEMS,
    404: 'No verified account has this link reference.',
    409: 'This link reference has already paid (`link-ref-used`).',
    422: 'The reference was verified for another user, order or amount (`link-ref-mismatch`).',
    502: 'The provider could not be used.',
    504: 'The provider did not answer in time.',
    ...STORE_PROBLEMS,
    ...COMMON_PROBLEMS,
  },
}];

/** 422: the reference was verified for someone or something else. */
function mismatch(path: string, detail: string): ProblemError {
  return problem('link-ref-mismatch', detail, { errors: [{ path, message: 'does not match the verification' }] });
}

const sameAmount = (a: string, b: string) => Number(a) === Number(b);

/**
 * Whether a failed call certainly charged nothing, so the reference may be tried again: no token to call
 * with, a connection never made, or the provider's own refusal (4xx). A 5xx, a reset mid-request or a
 * time-out may have charged: the reference stays used and the merchant reconciles with the provider.
 */
function nothingCharged(error: unknown): boolean {
  if (error instanceof TokenError) return true;
  if (error instanceof UpstreamUnreachableError) return connectionNeverEstablished(error.cause);
  return error instanceof UpstreamHttpError && error.status < 500;
}

/** `merchantAuth`: the API-key check shared with /links (see merchant-auth.ts). */
export function transactionsRouter(ctx: ProxyContext, client: TransactionClient, merchantAuth: RequestHandler[]): Router {
  const router = express.Router();
  const { config, store, logger } = ctx;
  router.post('/transactions', ...merchantAuth, express.json({ limit: TRANSACTION_BODY_LIMIT }), async (req, res) => {
    if (!req.is('application/json')) throw problem('unsupported-media-type', 'The request body must be application/json.');
    const body = parseOrThrow(SubmitTransactionBody, req.body, 'The request body');
    const { linkRef, merchantTransactionId, merchantUserId, amount, product, language, transactionRegion, dataPassThrough, originatorIp, ...rest } = body;
    const { record, outcome } = await resolveLinkRef(ctx, linkRef);
    if (record.merchantUserId !== merchantUserId) throw mismatch('merchantUserId', 'This account was verified for another merchant user.');
    if (record.merchantTransactionId !== merchantTransactionId) throw mismatch('merchantTransactionId', 'This account was verified for another order.');
    if (amount !== undefined && record.amount !== undefined && !sameAmount(amount, record.amount)) {
      throw mismatch('amount', `This account was verified for an amount of ${record.amount}.`);
    }
    // Single use, across instances: the first request to claim the reference pays; any other is refused.
    const claim = `${merchantTransactionId}:${newId()}`;
    const holder = await store.mark(markerKey.redeemed(linkRef), claim, sessionMarkerTtlMs(record, ctx.now()));
    if (holder !== claim) {
      logger.warn({ linkRef: sessionLogRef(linkRef), merchantTransactionId }, 'refused a second payment with one link reference');
      throw problem('link-ref-used',
        `This link reference has already paid order ${redeemedOrder(holder)}; link the account again for another payment.`,
        { errors: [{ path: 'linkRef', message: 'has already been used' }] });
    }
    let result;
    try {
      result = await client.submit({
        ...rest,
        ...(amount !== undefined ? { amount } : {}),
        product: product ?? config.product,
        countryCode: 'US',
        transactionRegion: transactionRegion ?? config.transactionRegion,
        language,
        dataPassThrough,
        // The caller is the merchant's server, so its address is not the consumer's: only what it sends.
        originatorIp,
        merchant: { merchantId: config.merchantId, merchantUserId, merchantTransactionId, merchantSubId: config.merchantSubId },
        accountToken: outcome.accountToken,
      });
    } catch (error) {
      if (nothingCharged(error)) await store.unmark(markerKey.redeemed(linkRef));
      throw error;
    }
    if (result.status >= 400 && result.status < 500) await store.unmark(markerKey.redeemed(linkRef));
    logger.info({ merchantTransactionId, linkRef: sessionLogRef(linkRef), status: result.status }, 'interactive transaction submitted');
    res.status(result.status).set('cache-control', 'no-store').json(result.body);
  });
  return router;
}
