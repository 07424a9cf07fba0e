// The payment of an order, as a typed record: one per merchant transaction id, claimed by one payment at
// a time under a lease. A claim whose holder dies (a killed process, a lost instance) is never paid again
// and never stuck: once its lease is over it turns `unknown` (PaymentStore.expireLeases), the merchant
// is told, and records what the provider says (payments/reconcile.ts). Implemented for memory, SQLite and
// Redis (storage/{memory,sqlite,redis}/payments.ts); test/helpers/storage-contract.ts holds them to one behaviour.
import { z } from 'zod';

/**
 * `pending`: at the provider now (under a lease). `completed`: the provider answered 2xx (or the merchant
 * recorded it paid). `unknown`: the call may have charged (5xx, time-out, cut, a holder that died):
 * reconcile with the provider.
 */
export const PaymentState = z.enum(['pending', 'completed', 'unknown']);
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
  state: PaymentState.meta({ description: '`pending`: at the provider now; `unknown`: the call may have charged (5xx, time-out, a crash): reconcile with the provider' }),
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
   * Claims the order for `pending` (state `pending`, with its lease), unless the order has a record (then
   * that record) or `pending.idempotencyKey` was used for another order (then that order).
   */
  claim(pending: PaymentRecord, retentionMs: number): Promise<ClaimResult>;
  get(merchantTransactionId: string): Promise<PaymentRecord | undefined>;
  /**
   * Ends the payment `record.paymentId` with `record` (`completed` or `unknown`), if it still holds the order
   * and its result is not already `completed`. True when stored.
   */
  finish(record: PaymentRecord, retentionMs: number): Promise<boolean>;
  /** Frees the order (it certainly charged nothing) if `paymentId` holds it and it is not `completed`. True when freed. */
  release(merchantTransactionId: string, paymentId: string): Promise<boolean>;
  /**
   * Turns up to `max` `pending` payments whose lease ended by `nowMs` into `unknown`, and returns them:
   * each is returned by exactly one call, on whichever instance, so one event is told per payment.
   */
  expireLeases(nowMs: number, max: number): Promise<PaymentRecord[]>;
  close(): Promise<void>;
}

/** The record a lease expiry leaves: `unknown`, without its lease. */
export function leaseExpired(record: PaymentRecord): PaymentRecord {
  const { leaseExpiresAt: _lease, ...rest } = record;
  return { ...rest, state: 'unknown' };
}

/** Whether `finish`/`release` may act on `current` for the payment `paymentId`. */
export function heldBy(current: PaymentRecord | undefined, paymentId: string): current is PaymentRecord {
  return current !== undefined && current.paymentId === paymentId && current.state !== 'completed';
}
