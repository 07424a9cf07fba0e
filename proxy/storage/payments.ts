// The payment of an order, as a typed record: one current payment per merchant transaction id, claimed by
// one payment at a time under a lease. A claim whose holder dies (a killed process, a lost instance) is
// never paid again and never stuck: once its lease is over it turns `unknown` (PaymentStore.expireLeases),
// the merchant is told, and records what the provider says (PaymentStore.reconcile). A reconciliation is
// recorded, never a deletion: a payment reconciled `not-charged` stays on record as such, and a new
// payment of the order keeps it among the order's earlier payments, so a mistaken reconciliation can be
// seen. Implemented for memory, SQLite and Redis (storage/{memory,sqlite,redis}/payments.ts);
// test/helpers/storage-contract.ts holds every backend, a new one included, to one behaviour.
import { z } from 'zod';

/**
 * `pending`: at the provider now (under a lease). `completed`: the provider answered 2xx (or the merchant
 * recorded it paid). `unknown`: the call may have charged (5xx, time-out, cut, a holder that died):
 * reconcile with the provider. `not-charged`: the merchant recorded that the provider charged nothing
 * for this `unknown` payment; the order may be paid again, by a new payment.
 */
export const PaymentState = z.enum(['pending', 'completed', 'unknown', 'not-charged']);
export type PaymentState = z.infer<typeof PaymentState>;

/** How the merchant settled a payment whose result was unknown (POST /transactions/{id}/reconcile). */
export const Reconciliation = z.object({
  result: z.enum(['paid', 'not-charged']),
  at: z.iso.datetime(),
  transactionId: z.string().optional(),
});

/** What the proxy remembers of an order's payment (GET /transactions/{merchantTransactionId}). */
export const PaymentRecord = z.object({
  /** This payment's own id: events about it are named by it, so two payments of one order never share one. */
  paymentId: z.string(),
  merchantTransactionId: z.string(),
  merchantUserId: z.string().optional(),
  state: PaymentState.meta({
    description:
      '`pending`: at the provider now; `unknown`: the call may have charged (5xx, time-out, a crash): reconcile with the provider; `not-charged`: reconciled as charging nothing (the order may be paid again)',
  }),
  /** Epoch ms: while `pending`, the claim is its holder's until then (the upstream time-out and a margin). */
  leaseExpiresAt: z.number().optional(),
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
  /** When the payment was sent (ISO 8601). */
  paidAt: z.iso.datetime(),
  idempotencyKey: z.string().optional(),
  requestDigest: z.string(),
  /** Set when the merchant recorded the result of an `unknown` payment. */
  reconciled: Reconciliation.optional(),
});
export type PaymentRecord = z.infer<typeof PaymentRecord>;
export type Reconciliation = z.infer<typeof Reconciliation>;

export type ClaimResult =
  | { claimed: true }
  | { claimed: false; existing: PaymentRecord }
  /** The claim's Idempotency-Key was used for another order's payment (kept as long as that payment). */
  | { claimed: false; keyUsedFor: string };

/**
 * Every method rejects with SessionBackendUnavailableError while the backend cannot be reached. Records
 * live `retentionMs` from their claim (OBV_PAYMENT_RETENTION).
 */
export interface PaymentStore {
  /**
   * Claims the order for `pending` (state `pending`, with its lease), unless the order has a record that
   * is not `not-charged` (then that record) or `pending.idempotencyKey` was used for another order (then
   * that order). A `not-charged` record the claim replaces is kept among the order's earlier payments
   * (`earlier`), in the same atomic step.
   */
  claim(pending: PaymentRecord, retentionMs: number): Promise<ClaimResult>;
  /** The order's current payment (the last one claimed), whatever its state. */
  get(merchantTransactionId: string): Promise<PaymentRecord | undefined>;
  /**
   * The order's earlier payments, oldest first: each reconciled `not-charged`, then replaced by a new
   * claim. Kept for the retention from when each was replaced; empty for an order paid once.
   */
  earlier(merchantTransactionId: string): Promise<PaymentRecord[]>;
  /**
   * Ends the payment `record.paymentId` with `record` (`completed` or `unknown`), if it still holds the
   * order and its result is neither `completed` nor reconciled `not-charged`. True when stored.
   */
  finish(record: PaymentRecord, retentionMs: number): Promise<boolean>;
  /**
   * Frees the order (the call certainly charged nothing: it is as if never claimed) if `paymentId` holds
   * it and its result is neither `completed` nor `not-charged`. True when freed.
   */
  release(merchantTransactionId: string, paymentId: string): Promise<boolean>;
  /**
   * Records the merchant's reconciliation of the order's `unknown` payment `paymentId`, atomically:
   * `paid` makes it `completed` (with `transactionId`, when given), `not-charged` makes it `not-charged`;
   * either way the record keeps `reconciled` and stays on record for the retention. Undefined (nothing
   * changed) when `paymentId` is not the order's current payment or that payment is not `unknown`.
   */
  reconcile(
    merchantTransactionId: string,
    paymentId: string,
    reconciliation: Reconciliation,
    retentionMs: number,
  ): Promise<PaymentRecord | undefined>;
  /**
   * Turns up to `max` `pending` payments whose lease ended by `nowMs` into `unknown`, and returns them:
   * each is returned by exactly one call, on whichever instance, so one event is told per payment.
   */
  expireLeases(nowMs: number, max: number): Promise<PaymentRecord[]>;
  /**
   * Rewrites every payment of `merchantUserId` (current and earlier) as `forgottenPayment` (forgotten.ts)
   * keeps it, and resolves to how many it rewrote (0 the second time: none names the user any more).
   * Durable before it resolves.
   */
  forgetUser(merchantUserId: string): Promise<number>;
  close(): Promise<void>;
}

/** The record a lease expiry leaves: `unknown`, without its lease. */
export function leaseExpired(record: PaymentRecord): PaymentRecord {
  const { leaseExpiresAt: _lease, ...rest } = record;
  return { ...rest, state: 'unknown' };
}

/**
 * Whether `finish`/`release` may act on `current` for the payment `paymentId`: a result the provider gave
 * (`completed`) or the merchant recorded (`not-charged`) is never overwritten by a late holder.
 */
export function heldBy(current: PaymentRecord | undefined, paymentId: string): current is PaymentRecord {
  return (
    current !== undefined &&
    current.paymentId === paymentId &&
    current.state !== 'completed' &&
    current.state !== 'not-charged'
  );
}

/** Whether a new claim may take the order from `current`: none, or one reconciled as charging nothing. */
export function claimable(current: PaymentRecord | undefined): boolean {
  return current === undefined || current.state === 'not-charged';
}

/** The record a reconciliation leaves of `current` (an `unknown` payment), or undefined when `current` is not `paymentId`'s `unknown` payment. */
export function reconciled(
  current: PaymentRecord | undefined,
  paymentId: string,
  reconciliation: Reconciliation,
): PaymentRecord | undefined {
  if (current?.paymentId !== paymentId || current.state !== 'unknown') return undefined;
  if (reconciliation.result === 'not-charged') return { ...current, state: 'not-charged', reconciled: reconciliation };
  return {
    ...current,
    state: 'completed',
    reconciled: reconciliation,
    ...(reconciliation.transactionId ? { transactionId: reconciliation.transactionId } : {}),
  };
}
