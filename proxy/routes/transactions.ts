// POST /transactions — for the merchant's SERVER only (bearer OBV_MERCHANT_API_KEY): pays an order with a
// link reference (payments/pay.ts, also `proxy.pay()`); the provider's answer is passed through.
// GET /transactions/:merchantTransactionId — what was paid for an order; POST …/reconcile — the merchant
// records the result of an `unknown` payment (payments/reconcile.ts).
import express, { type RequestHandler, type Response, type Router } from 'express';
import { z } from 'zod';
import { problem } from '../common/errors.ts';
import { IdempotencyKey, parseJsonBody, parseOrThrow, text } from '../common/validation.ts';
import { TRANSACTION_BODY_LIMIT } from '../config/limits.ts';
import { OrderPaymentsSchema as StoredOrderPayments, type OrderPayments } from '../payments/orders.ts';
import type { Payments } from '../payments/payments.ts';
import { PaymentInput, type Payer } from '../payments/pay.ts';
import { ReconcileBody, type Reconciled } from '../payments/reconcile.ts';
import {
  COMMON_PROBLEMS,
  JSON_BODY_PROBLEMS,
  MERCHANT_AUTH_PROBLEMS,
  type Operation,
  STORE_PROBLEMS,
} from '../openapi/operation.ts';
import { describes } from '../common/validation.ts';

/** The provider's answer, passed through: these fields as the sandbox sends them, and whatever else the provider adds. */
const ProviderTransactionAnswer = z.looseObject({
  transactionId: z.string().optional(),
  transactionStatus: z.string().optional().meta({ description: '`APPROVED` when the payment went through' }),
  merchantTransactionId: z.string().optional(),
});

const ReconciledSchema = describes<Reconciled>()(
  z.object({
    merchantTransactionId: z.string(),
    paymentId: z.string(),
    result: z.enum(['paid', 'not-charged']),
    payable: z.boolean().meta({ description: 'True when the order may be paid again' }),
  }),
);

/** What GET /transactions/{merchantTransactionId} answers: the order's payment, and its earlier ones. */
const OrderPaymentsSchema = describes<OrderPayments>()(StoredOrderPayments);

const idempotencyKeyHeader = {
  description: 'A retry with the same key and body answers the first result (header `idempotent-replayed: true`)',
  schema: IdempotencyKey,
};

export const transactionsOperations: Operation[] = [
  {
    method: 'post',
    path: '/transactions',
    operationId: 'submitTransaction',
    summary: 'Pay an order with a link reference (your server)',
    description:
      'Endpoint 4 with the stored accountToken, for the user, order, amount and currency the reference was verified for; ' +
      'an order is paid once. Present only when OBV_MERCHANT_API_KEY is set. Unknown fields are refused.',
    caller: 'merchant server',
    security: 'merchantApiKey',
    headers: { 'Idempotency-Key': idempotencyKeyHeader },
    body: { contentType: 'application/json', schema: PaymentInput },
    responses: {
      '2XX': {
        description: "The provider's answer, passed through (or replayed for the same Idempotency-Key and body)",
        content: { 'application/json': ProviderTransactionAnswer },
      },
      '4XX': {
        description: 'The provider refused the transaction: its answer, passed through (the order may be paid again)',
        content: { 'application/json': ProviderTransactionAnswer },
      },
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
  },
  {
    method: 'get',
    path: '/transactions/:merchantTransactionId',
    operationId: 'getPayment',
    summary: 'What was paid for an order (your server)',
    caller: 'merchant server',
    security: 'merchantApiKey',
    pathParams: { merchantTransactionId: text(128) },
    responses: {
      200: {
        description:
          "The order's payment: `pending` while it is at the provider, `completed`, `unknown` (reconcile it), or `not-charged` (reconciled: " +
          'the order may be paid again); `earlierPayments` lists the payments a reconciliation freed the order from',
        content: { 'application/json': OrderPaymentsSchema },
      },
    },
    problems: {
      ...MERCHANT_AUTH_PROBLEMS,
      400: 'The order id is invalid.',
      404: 'No payment of this order is on record (`unknown-payment`).',
      ...STORE_PROBLEMS,
      ...COMMON_PROBLEMS,
    },
  },
  {
    method: 'post',
    path: '/transactions/:merchantTransactionId/reconcile',
    operationId: 'reconcilePayment',
    summary: 'Record what the provider says of a payment whose result is unknown (your server)',
    description:
      '`paid` closes the order with this payment; `not-charged` lets the order be paid again by a new payment. Either way the payment stays on record ' +
      'with its reconciliation (`earlierPayments` of GET /transactions/{id} once the order is paid again). Only an `unknown` payment is reconciled.',
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
  },
];

function answer(res: Response, status: number, body: Record<string, unknown>): void {
  res.status(status).set('cache-control', 'no-store').json(body);
}

/**
 * Mounted only when paying is on (`pay`: the endpoint 4 settings). `merchantAuth`: the API-key check shared
 * with /links and /link-sessions (see http/merchant-auth.ts).
 */
export function transactionsRouter(
  deps: { payments: Pick<Payments, 'read' | 'reconcile'>; pay: Payer },
  merchantAuth: RequestHandler[],
): Router {
  const router = express.Router();

  router.post('/transactions', ...merchantAuth, express.json({ limit: TRANSACTION_BODY_LIMIT }), async (req, res) => {
    const body = parseJsonBody(PaymentInput, req);
    const rawKey = req.get('idempotency-key');
    const idempotencyKey =
      rawKey === undefined
        ? undefined
        : parseOrThrow(IdempotencyKey, rawKey, 'The Idempotency-Key header', 'Idempotency-Key');
    const paid = await deps.pay(body, idempotencyKey);
    if (paid.replayed) res.set('idempotent-replayed', 'true');
    answer(res, paid.status, paid.body);
  });

  router.get('/transactions/:merchantTransactionId', ...merchantAuth, async (req, res) => {
    const merchantTransactionId = parseOrThrow(
      text(128),
      String(req.params.merchantTransactionId),
      'The path',
      'merchantTransactionId',
    );
    const payment = await deps.payments.read(merchantTransactionId);
    if (payment === undefined) {
      throw problem(
        'unknown-payment',
        `No payment of order ${merchantTransactionId} is on record (none was made, it was refused, or it is older than OBV_PAYMENT_RETENTION).`,
        { errors: [{ path: 'merchantTransactionId', message: 'has no payment' }] },
      );
    }
    res.set('cache-control', 'no-store').json(payment);
  });

  router.post(
    '/transactions/:merchantTransactionId/reconcile',
    ...merchantAuth,
    express.json({ limit: TRANSACTION_BODY_LIMIT }),
    async (req, res) => {
      const merchantTransactionId = parseOrThrow(
        text(128),
        String(req.params.merchantTransactionId),
        'The path',
        'merchantTransactionId',
      );
      const reconciled: Reconciled = await deps.payments.reconcile(
        merchantTransactionId,
        parseJsonBody(ReconcileBody, req),
      );
      res.set('cache-control', 'no-store').json(reconciled);
    },
  );
  return router;
}
