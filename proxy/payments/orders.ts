// One payment per order. The first request to claim an order (its merchant transaction id) is the only
// one that reaches the provider; every later request for the order gets that payment's result — as a
// replay when it carries the same Idempotency-Key and body, as a 409 otherwise. A call that certainly
// charged nothing frees the order again; one that may have charged keeps it, marked `unknown`, for the
// merchant to reconcile with the provider.
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { problem } from '../errors.ts';
import { newId } from '../sessions/ids.ts';
import { markerKey } from '../sessions/markers.ts';

/** What the proxy remembers of an order's payment (GET /transactions/{merchantTransactionId}). */
export const PaymentRecord = z.object({
  merchantTransactionId: z.string(),
  /** `completed`: the provider answered 2xx. `unknown`: the call may have charged (5xx, time-out, cut). */
  state: z.enum(['completed', 'unknown']).meta({ description: '`unknown`: the call may have charged (5xx, time-out): reconcile with the provider' }),
  /**
   * The provider's HTTP status and the known fields of its body (transactionId, transactionStatus,
   * merchantTransactionId: nothing else is kept, so no echoed credential is stored), replayed to a retry
   * with the same Idempotency-Key.
   */
  providerStatus: z.number().optional(),
  providerResponse: z.record(z.string(), z.unknown()).optional(),
  transactionId: z.string().optional(),
  transactionStatus: z.string().optional(),
  amount: z.string(),
  currency: z.string(),
  accountLabel: z.string(),
  fiName: z.string(),
  fiAccountType: z.string(),
  linkRef: z.string(),
  paidAt: z.iso.datetime(),
  idempotencyKey: z.string().optional(),
  requestDigest: z.string(),
});
export type PaymentRecord = z.infer<typeof PaymentRecord>;

/** What the merchant's server reads of a payment (GET /transactions/{id}): the record without the replay bookkeeping. */
export const PaymentViewSchema = PaymentRecord.omit({ providerResponse: true, idempotencyKey: true, requestDigest: true, linkRef: true });

export function paymentView(payment: PaymentRecord) {
  const { providerResponse: _body, idempotencyKey: _key, requestDigest: _digest, linkRef: _ref, ...view } = payment;
  return view;
}
export type PaymentView = ReturnType<typeof paymentView>;

/** An order's payment: none, being paid right now, or its record. */
export async function readPayment(ctx: ProxyContext, merchantTransactionId: string): Promise<PaymentRecord | 'in-progress' | undefined> {
  const claim = await ctx.store.readMark(markerKey.order(merchantTransactionId));
  if (claim === undefined) return undefined;
  const stored = await ctx.store.readMark(markerKey.payment(claim));
  if (stored === undefined) return 'in-progress';
  return PaymentRecord.parse(JSON.parse(stored));
}

export interface OrderClaim {
  merchantTransactionId: string;
  claim: string;
}

/** The replay of an earlier payment, for a retry with the same Idempotency-Key and body. */
export interface Replay {
  replay: PaymentRecord;
}

/** How a request says it is the retry of an earlier one: its Idempotency-Key and its body's digest. */
export interface RetryIdentity {
  idempotencyKey?: string | undefined;
  requestDigest: string;
}

/**
 * The answer for an order that already has a payment: a replay when `retry` is the request that made it
 * (same Idempotency-Key and body), else 409 — `payment-in-progress`, or `order-already-paid` carrying
 * the first payment.
 */
export function earlierPayment(merchantTransactionId: string, payment: PaymentRecord | 'in-progress', retry: RetryIdentity, ctx: ProxyContext): Replay {
  if (payment === 'in-progress') {
    throw problem('payment-in-progress', `Order ${merchantTransactionId} is being paid by another request; read its result with GET /transactions/{merchantTransactionId}.`,
      { errors: [{ path: 'merchantTransactionId', message: 'is being paid' }] });
  }
  // Only a payment the provider answered is replayed; one whose result is unknown (5xx, time-out) is a
  // 409 however it is retried: answering 201 would tell the merchant it was paid.
  if (payment.state === 'completed' && retry.idempotencyKey !== undefined && payment.idempotencyKey === retry.idempotencyKey
    && payment.requestDigest === retry.requestDigest) {
    return { replay: payment };
  }
  ctx.logger.warn({ merchantTransactionId }, 'refused a second payment of an order');
  throw problem('order-already-paid',
    payment.state === 'unknown'
      ? `Order ${merchantTransactionId} has a payment whose result is unknown (the provider may have charged): reconcile with the provider before trying again.`
      : `Order ${merchantTransactionId} already has a payment (transactionStatus ${payment.transactionStatus ?? 'not given'}); an order is paid once.`,
    { errors: [{ path: 'merchantTransactionId', message: 'has already been paid' }], extensions: { payment: paymentView(payment) } });
}

/**
 * Claims `merchantTransactionId` for one payment: resolves to the claim, or (another request claimed it
 * first) to what `earlierPayment` answers.
 */
export async function claimOrder(ctx: ProxyContext, merchantTransactionId: string, retry: RetryIdentity): Promise<OrderClaim | Replay> {
  const claim = newId();
  const held = await ctx.store.mark(markerKey.order(merchantTransactionId), claim, ctx.config.paymentRetentionMs);
  if (held === claim) return { merchantTransactionId, claim };
  const stored = await ctx.store.readMark(markerKey.payment(held));
  return earlierPayment(merchantTransactionId, stored === undefined ? 'in-progress' : PaymentRecord.parse(JSON.parse(stored)), retry, ctx);
}

/** Records the claimed order's payment (it then answers every later request for the order). */
export async function recordPayment(ctx: ProxyContext, order: OrderClaim, payment: PaymentRecord): Promise<void> {
  await ctx.store.mark(markerKey.payment(order.claim), JSON.stringify(payment), ctx.config.paymentRetentionMs);
}

/** Frees the claimed order: its payment certainly charged nothing, so it may be paid again. */
export async function releaseOrder(ctx: ProxyContext, order: OrderClaim): Promise<void> {
  await ctx.store.unmark(markerKey.order(order.merchantTransactionId));
}
