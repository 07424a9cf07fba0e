// POST /transactions — for the merchant's SERVER only (bearer OBV_MERCHANT_API_KEY): pays an order with a
// link reference (endpoint 4). The reference pays only for the user, order, amount and currency it was
// verified for; the order is paid once (payments/orders.ts), whatever reference is offered; the amount
// and currency sent upstream are the verified ones. The provider's answer is passed through.
// GET /transactions/:merchantTransactionId — what was paid for an order.
import { createHash } from 'node:crypto';
import express, { type RequestHandler, type Response, type Router } from 'express';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { problem, type ProblemError } from '../errors.ts';
import { ID_PATTERN, sessionLogRef } from '../sessions/ids.ts';
import { TokenError, UpstreamHttpError, UpstreamUnreachableError } from '../upstream/errors.ts';
import { connectionNeverEstablished } from '../upstream/http.ts';
import type { TransactionClient, TransactionResult } from '../upstream/transaction-client.ts';
import { resolveLinkRef } from './links.ts';
import { Amount, CurrencyCode, IdempotencyKey, parseJsonBody, parseOrThrow, text } from '../validation.ts';
import { TRANSACTION_BODY_LIMIT } from '../config/limits.ts';
import { claimOrder, earlierPayment, finishPayment, paymentView, PaymentViewSchema as StoredPaymentView, type PaymentView, readPayment, releaseOrder, type PaymentRecord, type Replay } from '../payments/orders.ts';
import { tellPayment } from '../payments/payment-events.ts';
import { ReconcileBody, reconcilePayment, type Reconciled } from '../payments/reconcile.ts';
import type { SessionRecord } from '../sessions/types.ts';
import { reauthorizationCode, reauthorizationRequired, staleAccountId } from '../accounts/reauthorization.ts';
import type { EventData } from '../events/shapes.ts';
import { safeError } from '../logger.ts';
import { COMMON_PROBLEMS, describes, JSON_BODY_PROBLEMS, MERCHANT_AUTH_PROBLEMS, type Operation, STORE_PROBLEMS } from '../openapi/operation.ts';

/** CONTRACTS §3. Strict: a field the proxy does not know is refused, never passed to the provider. */
export const SubmitTransactionBody = z.strictObject({
  linkRef: z.string().regex(ID_PATTERN, 'must be the link reference the element gave the page'),
  merchantUserId: text(128),
  merchantTransactionId: text(128),
  /** What the merchant's server expects to charge: must equal the verified amount and currency. */
  amount: Amount,
  currency: CurrencyCode,
  product: text(64).optional(),
  language: text(35).optional(),
  transactionRegion: text(64).optional(),
  dataPassThrough: z.string().max(1024).optional(),
  originatorIp: z.union([z.ipv4(), z.ipv6()]).optional(),
});
type SubmitTransactionBody = z.infer<typeof SubmitTransactionBody>;


/** The provider's answer, passed through: these fields as the sandbox sends them, and whatever else the provider adds. */
const ProviderTransactionAnswer = z.looseObject({
  transactionId: z.string().optional(),
  transactionStatus: z.string().optional().meta({ description: '`APPROVED` when the payment went through' }),
  merchantTransactionId: z.string().optional(),
});

const ReconciledSchema = describes<Reconciled>()(z.object({
  merchantTransactionId: z.string(),
  paymentId: z.string(),
  result: z.enum(['paid', 'not-charged']),
  payable: z.boolean().meta({ description: 'True when the order may be paid again' }),
}));

/** What GET /transactions/{merchantTransactionId} answers of a payment (payments/orders.ts). */
const PaymentViewSchema = describes<PaymentView>()(StoredPaymentView);

const idempotencyKeyHeader = { description: 'A retry with the same key and body answers the first result (header `idempotent-replayed: true`)', schema: IdempotencyKey };

export const transactionsOperations: Operation[] = [{
  method: 'post',
  path: '/transactions',
  operationId: 'submitTransaction',
  summary: 'Pay an order with a link reference (your server)',
  description: 'Endpoint 4 with the stored accountToken, for the user, order, amount and currency the reference was verified for; '
    + 'an order is paid once. Present only when OBV_MERCHANT_API_KEY is set. Unknown fields are refused.',
  caller: 'merchant server',
  security: 'merchantApiKey',
  headers: { 'Idempotency-Key': idempotencyKeyHeader },
  body: { contentType: 'application/json', schema: SubmitTransactionBody },
  responses: {
    '2XX': { description: 'The provider\'s answer, passed through (or replayed for the same Idempotency-Key and body)', content: { 'application/json': ProviderTransactionAnswer } },
    '4XX': { description: 'The provider refused the transaction: its answer, passed through (the order may be paid again)', content: { 'application/json': ProviderTransactionAnswer } },
  },
  problems: {
    ...MERCHANT_AUTH_PROBLEMS,
    ...JSON_BODY_PROBLEMS,
    403: 'OBV_BIND_BANK_STEP: the browser that started has not come back from the bank yet (`bank-step-unconfirmed`).',
    404: 'No verified account has this link reference (`unknown-link-ref`).',
    409: 'The order has been paid (`order-already-paid`, with the first `payment`) or is being paid (`payment-in-progress`).',
    422: 'The reference was verified for another user, order, amount or currency (`link-ref-mismatch`), or the Idempotency-Key was used with another body.',
    502: 'The provider could not be used.',
    504: 'The provider did not answer in time.',
    ...STORE_PROBLEMS,
    ...COMMON_PROBLEMS,
  },
}, {
  method: 'get',
  path: '/transactions/:merchantTransactionId',
  operationId: 'getPayment',
  summary: 'What was paid for an order (your server)',
  caller: 'merchant server',
  security: 'merchantApiKey',
  pathParams: { merchantTransactionId: text(128) },
  responses: {
    200: {
      description: 'The order\'s payment: `pending` while it is at the provider, `completed`, or `unknown` (reconcile it)',
      content: { 'application/json': PaymentViewSchema },
    },
  },
  problems: { ...MERCHANT_AUTH_PROBLEMS, 400: 'The order id is invalid.', 404: 'No payment of this order is on record (`unknown-payment`).', ...STORE_PROBLEMS, ...COMMON_PROBLEMS },
}, {
  method: 'post',
  path: '/transactions/:merchantTransactionId/reconcile',
  operationId: 'reconcilePayment',
  summary: 'Record what the provider says of a payment whose result is unknown (your server)',
  description: '`paid` closes the order with this payment; `not-charged` frees the order so it may be paid again. Only an `unknown` payment is reconciled.',
  caller: 'merchant server',
  security: 'merchantApiKey',
  pathParams: { merchantTransactionId: text(128) },
  body: { contentType: 'application/json', schema: ReconcileBody },
  responses: {
    200: { description: 'The payment was reconciled', content: { 'application/json': ReconciledSchema } },
  },
  problems: {
    ...MERCHANT_AUTH_PROBLEMS,
    ...JSON_BODY_PROBLEMS,
    404: 'The order has no payment with this `paymentId` (`unknown-payment`).',
    409: 'The payment is not `unknown`: completed, or still at the provider (`payment-not-unknown`).',
    ...STORE_PROBLEMS,
    ...COMMON_PROBLEMS,
  },
}];

/** 422: the reference was verified for someone or something else. */
function mismatch(path: string, detail: string): ProblemError {
  return problem('link-ref-mismatch', detail, { errors: [{ path, message: 'does not match the verification' }] });
}

const sameAmount = (a: string, b: string) => Number(a) === Number(b);

/** The payment must be exactly what the account was verified for. */
function requireVerifiedPurchase(record: SessionRecord, body: SubmitTransactionBody): void {
  if (record.merchantUserId !== body.merchantUserId) throw mismatch('merchantUserId', 'This account was verified for another merchant user.');
  if (record.merchantTransactionId !== body.merchantTransactionId) throw mismatch('merchantTransactionId', 'This account was verified for another order.');
  if (record.amount === undefined || !sameAmount(body.amount, record.amount)) {
    throw mismatch('amount', `This account was verified for an amount of ${record.amount ?? '(none)'}.`);
  }
  if (body.currency !== (record.currency ?? 'USD')) throw mismatch('currency', `This account was verified for ${record.currency ?? 'USD'}.`);
}

/**
 * Whether a failed call certainly charged nothing, so the order may be paid again: no token to call
 * with, a connection never made, or the provider's own refusal (4xx). A 5xx, a reset mid-request or a
 * time-out may have charged: the order stays claimed and the merchant reconciles with the provider.
 */
function nothingCharged(error: unknown): boolean {
  if (error instanceof TokenError) return true;
  if (error instanceof UpstreamUnreachableError) return connectionNeverEstablished(error.cause);
  return error instanceof UpstreamHttpError && error.status < 500 && !refusalMayHaveCharged(error.status);
}

/** Whether `status` (upper case) is one of `words`, which the configuration compares case-insensitively. */
const isOneOf = (status: string, words: readonly string[]) => words.some((word) => word.toUpperCase() === status);

/**
 * Whether the provider's refusal may still have charged: a 409 can be a gateway's "duplicate
 * transaction" (an earlier attempt went through). Every other 4xx is a refusal that charged nothing.
 */
function refusalMayHaveCharged(status: number): boolean {
  return status === 409;
}

/** A digest of the request, so a retry with the same Idempotency-Key is recognised as the same request. */
function requestDigest(body: SubmitTransactionBody): string {
  const sorted = Object.fromEntries(Object.entries(body).sort(([a], [b]) => a.localeCompare(b)));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('base64url');
}

/** The fields of the provider's answer the proxy keeps (the answer is otherwise undocumented, D18). */
const KEPT_ANSWER_FIELDS = ['transactionId', 'transactionStatus', 'merchantTransactionId'] as const;

function knownFields(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(KEPT_ANSWER_FIELDS.filter((field) => field in body).map((field) => [field, body[field]]));
}

function answer(res: Response, status: number, body: Record<string, unknown>): void {
  res.status(status).set('cache-control', 'no-store').json(body);
}

/** The first answer again, for a retry with the same Idempotency-Key and body. */
function replay(res: Response, { replay: payment }: Replay): void {
  res.set('idempotent-replayed', 'true');
  answer(res, payment.providerStatus ?? 201, payment.providerResponse ?? {});
}

/** `merchantAuth`: the API-key check shared with /links and /link-sessions (see merchant-auth.ts). */
export function transactionsRouter(ctx: ProxyContext, client: TransactionClient, merchantAuth: RequestHandler[]): Router {
  const router = express.Router();
  const { config, logger } = ctx;

  /**
   * Endpoint 4 for the claimed payment. Freed when it certainly charged nothing, `unknown` when it may
   * have (the merchant reconciles it), `completed` with the provider's answer otherwise.
   */
  async function submit(payment: PaymentRecord, body: SubmitTransactionBody, accountToken: string): Promise<TransactionResult> {
    const { merchantUserId, merchantTransactionId, product, language, transactionRegion, dataPassThrough, originatorIp } = body;
    let result: TransactionResult;
    try {
      result = await client.submit({
        product: product ?? config.product,
        countryCode: 'US',
        transactionRegion: transactionRegion ?? config.transactionRegion,
        language,
        dataPassThrough,
        // The caller is the merchant's server, so its address is not the consumer's: only what it sends.
        originatorIp,
        // Always what the account was verified for, never a figure from the request.
        amount: payment.amount,
        currency: payment.currency,
        merchant: { merchantId: config.merchantId, merchantUserId, merchantTransactionId, merchantSubId: config.merchantSubId },
        accountToken,
      });
    } catch (error) {
      if (nothingCharged(error)) {
        await releaseOrder(ctx, payment);
        await tellPayment(ctx, 'payment.failed', payment, { code: 'PAYMENT_NOT_SENT',
          message: 'The payment service could not be reached; nothing was charged and the order may be paid again.' });
      } else {
        await finishUnknown(payment, 'The payment service did not answer (a time-out or a server error); it may have charged. Check with the provider and record the result.');
      }
      throw error;
    }
    const answered: PaymentRecord = {
      ...payment,
      providerStatus: result.status,
      providerResponse: knownFields(result.body),
      ...(typeof result.body.transactionId === 'string' ? { transactionId: result.body.transactionId } : {}),
      ...(typeof result.body.transactionStatus === 'string' ? { transactionStatus: result.body.transactionStatus } : {}),
    };
    const status = (answered.transactionStatus ?? '').toUpperCase();
    if (result.status >= 400 && !refusalMayHaveCharged(result.status)) {
      await releaseOrder(ctx, payment);
      await tellPayment(ctx, 'payment.failed', payment, { code: 'PAYMENT_REFUSED',
        message: `The payment service refused the payment (HTTP ${result.status}); nothing was charged and the order may be paid again.` });
    } else if (result.status >= 400) {
      await finishUnknown(answered, `The payment service answered HTTP ${result.status}, which may mean it charged (a duplicate transaction). Check with the provider and record the result.`);
    } else if (isOneOf(status, config.declinedTransactionStatuses)) {
      // Answered, and declined: nothing was charged (OBV_DECLINED_TRANSACTION_STATUSES).
      await releaseOrder(ctx, payment);
      await tellPayment(ctx, 'payment.failed', answered, { code: 'PAYMENT_DECLINED',
        message: `The payment service declined the payment (transactionStatus ${answered.transactionStatus}); nothing was charged and the order may be paid again.` });
    } else if (!isOneOf(status, config.paidTransactionStatuses)) {
      await finishUnknown(answered, `The payment service answered transactionStatus ${answered.transactionStatus ?? '(none)'}, which is neither paid nor declined (OBV_PAID_TRANSACTION_STATUSES). Check with the provider and record the result.`);
    } else {
      const paid: PaymentRecord = { ...answered, state: 'completed' };
      await finishPayment(ctx, paid);
      await tellPayment(ctx, 'payment.succeeded', paid, { transactionId: paid.transactionId ?? '', transactionStatus: paid.transactionStatus ?? '' });
    }
    return result;
  }

  /** The payment may have charged: kept `unknown` (no retry pays the order again) and the merchant told. */
  async function finishUnknown(payment: PaymentRecord, reason: string): Promise<void> {
    const unknown: PaymentRecord = { ...payment, state: 'unknown' };
    if (await finishPayment(ctx, unknown)) await tellPayment(ctx, 'payment.unknown', unknown, { reason });
  }

  async function tellReauthorization(data: EventData<'reauthorization.required'>): Promise<void> {
    try {
      await ctx.events.emit('reauthorization.required', data);
    } catch (error) {
      logger.error({ err: safeError(error), merchantTransactionId: data.merchantTransactionId, type: 'reauthorization.required' }, 'the merchant event could not be recorded');
    }
  }

  const tellReplayed = (payment: PaymentRecord) =>
    tellPayment(ctx, 'payment.succeeded', payment, { transactionId: payment.transactionId ?? '', transactionStatus: payment.transactionStatus ?? '' });

  router.post('/transactions', ...merchantAuth, express.json({ limit: TRANSACTION_BODY_LIMIT }), async (req, res) => {
    const body = parseJsonBody(SubmitTransactionBody, req);
    const rawKey = req.get('idempotency-key');
    const idempotencyKey = rawKey === undefined ? undefined : parseOrThrow(IdempotencyKey, rawKey, 'The Idempotency-Key header', 'Idempotency-Key');
    const retry = { idempotencyKey, requestDigest: requestDigest(body) };
    // An order paid before answers with that payment, whatever link reference is offered now.
    const earlier = await readPayment(ctx, body.merchantTransactionId);
    if (earlier !== undefined) {
      const replayed = earlierPayment(ctx, earlier, retry);
      await tellReplayed(replayed.replay);
      replay(res, replayed);
      return;
    }
    const { record, outcome } = await resolveLinkRef(ctx, body.linkRef);
    requireVerifiedPurchase(record, body);
    // A reference made from a saved account the shopper removed since pays nothing (storage/removals.ts).
    if (record.savedAccountId !== undefined && record.merchantUserId !== undefined && await ctx.removals.isRemoved(record.merchantUserId, record.savedAccountId)) {
      throw problem('saved-account-removed', 'The shopper removed the saved account this link reference was made from; nothing was charged.',
        { errors: [{ path: 'linkRef', message: 'was made from a saved account the shopper removed' }] });
    }
    const claimed = await claimOrder(ctx, {
      merchantTransactionId: body.merchantTransactionId,
      merchantUserId: body.merchantUserId,
      amount: record.amount!,
      currency: record.currency ?? 'USD',
      accountLabel: outcome.accountLabel,
      fiName: outcome.fiName,
      fiAccountType: outcome.fiAccountType,
      linkRef: body.linkRef,
      requestDigest: retry.requestDigest,
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    }, retry);
    if ('replay' in claimed) {
      await tellReplayed(claimed.replay);
      replay(res, claimed);
      return;
    }
    const result = await submit(claimed, body, outcome.accountToken);
    // A stale account (nothing was charged, the order is free again): the shopper must reconnect it.
    const stale = result.status >= 400 ? reauthorizationCode(result.body, config.reauthorizationCodes) : undefined;
    if (stale) {
      logger.info({ merchantTransactionId: body.merchantTransactionId, providerCode: stale }, 'transaction refused: the account needs re-authorization');
      const problem = reauthorizationRequired(record, outcome, stale);
      const accountId = staleAccountId(record, outcome);
      const { accountLabel, fiName, fiAccountType } = outcome;
      await tellReauthorization({ merchantUserId: body.merchantUserId, accountLabel, fiName, fiAccountType, code: stale, merchantTransactionId: body.merchantTransactionId, ...(accountId ? { accountId } : {}) });
      throw problem;
    }
    logger.info({ merchantTransactionId: body.merchantTransactionId, linkRef: sessionLogRef(body.linkRef), status: result.status }, 'interactive transaction submitted');
    answer(res, result.status, result.body);
  });

  router.get('/transactions/:merchantTransactionId', ...merchantAuth, async (req, res) => {
    const merchantTransactionId = parseOrThrow(text(128), String(req.params.merchantTransactionId), 'The path', 'merchantTransactionId');
    const payment = await readPayment(ctx, merchantTransactionId);
    if (payment === undefined) {
      throw problem('unknown-payment', `No payment of order ${merchantTransactionId} is on record (none was made, it was refused, or it is older than OBV_PAYMENT_RETENTION).`,
        { errors: [{ path: 'merchantTransactionId', message: 'has no payment' }] });
    }
    res.set('cache-control', 'no-store').json(paymentView(payment));
  });

  router.post('/transactions/:merchantTransactionId/reconcile', ...merchantAuth, express.json({ limit: TRANSACTION_BODY_LIMIT }), async (req, res) => {
    const merchantTransactionId = parseOrThrow(text(128), String(req.params.merchantTransactionId), 'The path', 'merchantTransactionId');
    const reconciled: Reconciled = await reconcilePayment(ctx, merchantTransactionId, parseJsonBody(ReconcileBody, req));
    res.set('cache-control', 'no-store').json(reconciled);
  });
  return router;
}
