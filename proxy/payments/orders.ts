// One payment per order. The first request to claim an order (its merchant transaction id) is the only
// one that reaches the provider; every later request for the order gets that payment's result — as a
// replay when it carries the same Idempotency-Key and body, as a 409 otherwise. A call that certainly
// charged nothing frees the order again; one that may have charged keeps it, `unknown`, until the
// merchant records what the provider says (reconcile.ts): `not-charged` lets a new payment claim the
// order, the reconciled one kept beside it. A claim is a lease (storage/payments.ts): if
// its holder dies, the order turns `unknown` when the lease ends (leases.ts), never `pending` for ever.
import type { ProxyConfig } from '../config/schema.ts';
import type { Logger } from 'pino';
import { problem } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import { PaymentRecord, type PaymentStore } from '../storage/payments.ts';
import { PAYMENT_LEASE_MARGIN_MS, UPSTREAM_CALLS_PER_PAYMENT } from '../config/limits.ts';
import type { PaymentLeases } from './leases.ts';

export { PaymentRecord } from '../storage/payments.ts';

/** What an order's payment rules need: the payments, the lease check, the settings, a clock. */
export interface OrderDeps {
  payments: PaymentStore;
  leases: Pick<PaymentLeases, 'expireDue'>;
  config: Pick<ProxyConfig, 'paymentRetentionMs' | 'upstreamTimeoutMs'>;
  logger: Logger;
  now: () => number;
}

/** What the merchant's server reads of a payment (GET /transactions/{id}): the record without the replay bookkeeping. */
export const PaymentViewSchema = PaymentRecord.omit({
  providerResponse: true,
  idempotencyKey: true,
  requestDigest: true,
  linkRef: true,
  leaseExpiresAt: true,
});

export function paymentView(payment: PaymentRecord) {
  const {
    providerResponse: _body,
    idempotencyKey: _key,
    requestDigest: _digest,
    linkRef: _ref,
    leaseExpiresAt: _lease,
    ...view
  } = payment;
  return view;
}
export type PaymentView = ReturnType<typeof paymentView>;

/** GET /transactions/{id}: the order's current payment, and the earlier ones a reconciliation freed the order from. */
export const OrderPaymentsSchema = PaymentViewSchema.extend({
  earlierPayments: PaymentViewSchema.array().optional().meta({
    description:
      "The order's earlier payments, oldest first: each reconciled `not-charged`, then followed by a new payment (absent when there is none)",
  }),
});
export type OrderPayments = PaymentView & { earlierPayments?: PaymentView[] };

/** The view of an order's payments: the current one, and its earlier ones when it has some. */
export async function orderPayments(
  deps: OrderDeps,
  merchantTransactionId: string,
): Promise<OrderPayments | undefined> {
  const payment = await readPayment(deps, merchantTransactionId);
  if (!payment) return undefined;
  const earlier = await deps.payments.earlier(merchantTransactionId);
  return { ...paymentView(payment), ...(earlier.length > 0 ? { earlierPayments: earlier.map(paymentView) } : {}) };
}

/**
 * How long a payment's claim is its holder's: every upstream call a payment may make (a token, the
 * transaction, their retry after a 401) each within the time-out, and a margin for clocks that differ
 * between instances. Past it the holder is taken for dead and the payment for `unknown`.
 */
export function paymentLeaseMs(config: Pick<ProxyConfig, 'upstreamTimeoutMs'>): number {
  return UPSTREAM_CALLS_PER_PAYMENT * config.upstreamTimeoutMs + PAYMENT_LEASE_MARGIN_MS;
}

/** An order's payment, or undefined; a `pending` one whose lease is over is turned `unknown` first. */
export async function readPayment(deps: OrderDeps, merchantTransactionId: string): Promise<PaymentRecord | undefined> {
  const payment = await deps.payments.get(merchantTransactionId);
  if (payment?.state !== 'pending' || (payment.leaseExpiresAt ?? 0) > deps.now()) return payment;
  await deps.leases.expireDue();
  return deps.payments.get(merchantTransactionId);
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
 * (same Idempotency-Key and body), 422 for its key with another body, else 409 — `payment-in-progress`,
 * or `order-already-paid` carrying the first payment.
 */
export function earlierPayment(deps: Pick<OrderDeps, 'logger'>, payment: PaymentRecord, retry: RetryIdentity): Replay {
  const { merchantTransactionId } = payment;
  const sameKey = retry.idempotencyKey !== undefined && payment.idempotencyKey === retry.idempotencyKey;
  if (sameKey && payment.requestDigest !== retry.requestDigest) {
    throw problem(
      'idempotency-key-reused',
      'This Idempotency-Key was already used with a different request body; use a new key for a new request.',
      { errors: [{ path: 'Idempotency-Key', message: 'was already used with a different body' }] },
    );
  }
  if (payment.state === 'pending') {
    throw problem(
      'payment-in-progress',
      `Order ${merchantTransactionId} is being paid by another request; read its result with GET /transactions/{merchantTransactionId}.`,
      { errors: [{ path: 'merchantTransactionId', message: 'is being paid' }] },
    );
  }
  // Only a payment the provider answered is replayed; one whose result is unknown (5xx, time-out) is a
  // 409 however it is retried: answering 201 would tell the merchant it was paid.
  if (payment.state === 'completed' && sameKey && payment.providerStatus !== undefined) return { replay: payment };
  deps.logger.warn({ merchantTransactionId }, 'refused a second payment of an order');
  throw problem(
    'order-already-paid',
    payment.state === 'unknown'
      ? `Order ${merchantTransactionId} has a payment whose result is unknown (the provider may have charged): reconcile it with the provider (POST /transactions/{merchantTransactionId}/reconcile) before trying again.`
      : `Order ${merchantTransactionId} already has a payment (transactionStatus ${payment.transactionStatus ?? 'not given'}); an order is paid once.`,
    {
      errors: [{ path: 'merchantTransactionId', message: 'has already been paid' }],
      extensions: { payment: paymentView(payment) },
    },
  );
}

/** A payment's fields before it is sent: what it pays, with what, and how a retry recognises it. */
export type PaymentDraft = Omit<
  PaymentRecord,
  | 'paymentId'
  | 'state'
  | 'leaseExpiresAt'
  | 'paidAt'
  | 'providerStatus'
  | 'providerResponse'
  | 'transactionId'
  | 'transactionStatus'
  | 'reconciled'
>;

/**
 * Claims the order for one new payment, under a lease: resolves to the `pending` record, or (the order
 * has a payment) to what `earlierPayment` answers.
 */
export async function claimOrder(
  deps: OrderDeps,
  draft: PaymentDraft,
  retry: RetryIdentity,
): Promise<PaymentRecord | Replay> {
  const now = deps.now();
  const pending: PaymentRecord = {
    ...draft,
    paymentId: `pay_${newId()}`,
    state: 'pending',
    leaseExpiresAt: now + paymentLeaseMs(deps.config),
    paidAt: new Date(now).toISOString(),
  };
  const claim = await deps.payments.claim(pending, deps.config.paymentRetentionMs);
  if (claim.claimed) return pending;
  if ('keyUsedFor' in claim) {
    throw problem(
      'idempotency-key-reused',
      "This Idempotency-Key was already used for another order's payment; use a new key for a new payment.",
      { errors: [{ path: 'Idempotency-Key', message: 'was already used for another order' }] },
    );
  }
  const existing =
    claim.existing.state === 'pending'
      ? ((await readPayment(deps, draft.merchantTransactionId)) ?? claim.existing)
      : claim.existing;
  return earlierPayment(deps, existing, retry);
}

/** Records the result of the claimed payment (`completed` or `unknown`). False when the order is no longer this payment's. */
export function finishPayment(deps: OrderDeps, payment: PaymentRecord): Promise<boolean> {
  const { leaseExpiresAt: _lease, ...finished } = payment;
  return deps.payments.finish(finished, deps.config.paymentRetentionMs);
}

/** Frees the claimed order: its payment certainly charged nothing, so it may be paid again. */
export function releaseOrder(
  deps: OrderDeps,
  payment: Pick<PaymentRecord, 'merchantTransactionId' | 'paymentId'>,
): Promise<boolean> {
  return deps.payments.release(payment.merchantTransactionId, payment.paymentId);
}
