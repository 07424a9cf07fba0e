// The merchant records what the provider says of a payment whose result was unknown: `paid` closes the
// order with that payment; `not-charged` lets the order be paid again, by a new payment. Either way the
// payment stays on record with its reconciliation (a mistaken one can be seen: GET /transactions/{id}
// lists it among the order's earlier payments once the order is paid again). Only an `unknown` payment
// is reconciled, and only the one named: a payment that completed meanwhile, or another payment of the
// order, is refused (409), never overwritten.
import { z } from 'zod';
import { problem } from '../common/errors.ts';
import { text } from '../common/validation.ts';
import { readPayment, type OrderDeps } from './orders.ts';

/** POST /transactions/{merchantTransactionId}/reconcile (CONTRACTS §3). */
export const ReconcileBody = z.strictObject({
  /** The payment being reconciled, as GET /transactions/{id} and the payment.unknown event name it. */
  paymentId: text(64),
  result: z.enum(['paid', 'not-charged'], { error: 'must be paid or not-charged' }),
  /** The provider's transaction id, when `paid` (from the provider's own records). */
  transactionId: text(128).optional(),
});
export type ReconcileBody = z.infer<typeof ReconcileBody>;

export interface Reconciled {
  merchantTransactionId: string;
  paymentId: string;
  result: 'paid' | 'not-charged';
  /** True when the order may be paid again (`not-charged`). */
  payable: boolean;
}

export async function reconcilePayment(
  deps: OrderDeps,
  merchantTransactionId: string,
  body: ReconcileBody,
): Promise<Reconciled> {
  const payment = await readPayment(deps, merchantTransactionId);
  if (!payment || payment.paymentId !== body.paymentId) {
    throw problem('unknown-payment', `Order ${merchantTransactionId} has no payment ${body.paymentId} on record.`, {
      errors: [{ path: 'paymentId', message: "is not this order's payment" }],
    });
  }
  if (payment.state !== 'unknown') {
    throw problem(
      'payment-not-unknown',
      `Payment ${body.paymentId} is ${payment.state}: only a payment whose result is unknown is reconciled.`,
      { errors: [{ path: 'paymentId', message: `is ${payment.state}` }] },
    );
  }
  const reconciliation = {
    result: body.result,
    at: new Date(deps.now()).toISOString(),
    ...(body.transactionId ? { transactionId: body.transactionId } : {}),
  };
  const done = await deps.payments.reconcile(
    merchantTransactionId,
    body.paymentId,
    reconciliation,
    deps.config.paymentRetentionMs,
  );
  if (!done) {
    throw problem(
      'payment-not-unknown',
      `Payment ${body.paymentId} changed while it was being reconciled; read it again.`,
      { errors: [{ path: 'paymentId', message: 'changed meanwhile' }] },
    );
  }
  deps.logger.info(
    { merchantTransactionId, paymentId: body.paymentId, result: body.result },
    'payment reconciled by the merchant',
  );
  return {
    merchantTransactionId,
    paymentId: body.paymentId,
    result: body.result,
    payable: body.result === 'not-charged',
  };
}
