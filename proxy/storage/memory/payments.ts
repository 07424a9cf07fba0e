// Payments in memory (tests, and sandbox mode when chosen): a Map, atomic on Node's single thread.
import { forgottenPayment } from '../forgotten.ts';
import {
  claimable,
  heldBy,
  leaseExpired,
  reconciled,
  type ClaimResult,
  type PaymentRecord,
  type PaymentStore,
  type Reconciliation,
} from '../payments.ts';

interface Kept {
  record: PaymentRecord;
  expiresAt: number;
}

export class MemoryPaymentStore implements PaymentStore {
  readonly #orders = new Map<string, Kept>();
  /** An order's earlier payments (each reconciled `not-charged`, then replaced), oldest first. */
  readonly #earlier = new Map<string, Kept[]>();
  /** Idempotency-Key → the order it was first used for. */
  readonly #keys = new Map<string, { order: string; expiresAt: number }>();
  readonly #now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  async claim(pending: PaymentRecord, retentionMs: number): Promise<ClaimResult> {
    const existing = this.#read(pending.merchantTransactionId);
    if (!claimable(existing)) return { claimed: false, existing: { ...existing! } };
    const key = pending.idempotencyKey;
    const keyed = key === undefined ? undefined : this.#keys.get(key);
    if (keyed && keyed.expiresAt > this.#now() && keyed.order !== pending.merchantTransactionId)
      return { claimed: false, keyUsedFor: keyed.order };
    if (key !== undefined)
      this.#keys.set(key, { order: pending.merchantTransactionId, expiresAt: this.#now() + retentionMs });
    if (existing) {
      const earlier = this.#earlier.get(pending.merchantTransactionId) ?? [];
      this.#earlier.set(pending.merchantTransactionId, [
        ...earlier,
        { record: existing, expiresAt: this.#now() + retentionMs },
      ]);
    }
    this.#orders.set(pending.merchantTransactionId, { record: { ...pending }, expiresAt: this.#now() + retentionMs });
    return { claimed: true };
  }

  async get(merchantTransactionId: string): Promise<PaymentRecord | undefined> {
    const record = this.#read(merchantTransactionId);
    return record && { ...record };
  }

  async earlier(merchantTransactionId: string): Promise<PaymentRecord[]> {
    return (this.#earlier.get(merchantTransactionId) ?? [])
      .filter((kept) => kept.expiresAt > this.#now())
      .map((kept) => ({ ...kept.record }));
  }

  async finish(record: PaymentRecord, retentionMs: number): Promise<boolean> {
    if (!heldBy(this.#read(record.merchantTransactionId), record.paymentId)) return false;
    this.#orders.set(record.merchantTransactionId, { record: { ...record }, expiresAt: this.#now() + retentionMs });
    return true;
  }

  async release(merchantTransactionId: string, paymentId: string): Promise<boolean> {
    if (!heldBy(this.#read(merchantTransactionId), paymentId)) return false;
    this.#orders.delete(merchantTransactionId);
    return true;
  }

  async reconcile(
    merchantTransactionId: string,
    paymentId: string,
    reconciliation: Reconciliation,
    retentionMs: number,
  ): Promise<PaymentRecord | undefined> {
    const record = reconciled(this.#read(merchantTransactionId), paymentId, reconciliation);
    if (record) this.#orders.set(merchantTransactionId, { record, expiresAt: this.#now() + retentionMs });
    return record && { ...record };
  }

  async expireLeases(nowMs: number, max: number): Promise<PaymentRecord[]> {
    const expired: PaymentRecord[] = [];
    for (const entry of this.#orders.values()) {
      if (expired.length >= max) break;
      const { record } = entry;
      if (record.state !== 'pending' || (record.leaseExpiresAt ?? 0) > nowMs) continue;
      entry.record = leaseExpired(record);
      expired.push({ ...entry.record });
    }
    return expired;
  }

  async forgetUser(merchantUserId: string): Promise<number> {
    let rewritten = 0;
    const forget = (kept: Kept) => {
      if (kept.record.merchantUserId !== merchantUserId) return;
      kept.record = forgottenPayment(kept.record);
      rewritten++;
    };
    for (const kept of this.#orders.values()) forget(kept);
    for (const earlier of this.#earlier.values()) earlier.forEach(forget);
    return rewritten;
  }

  async close(): Promise<void> {
    this.#orders.clear();
    this.#earlier.clear();
    this.#keys.clear();
  }

  #read(merchantTransactionId: string): PaymentRecord | undefined {
    const entry = this.#orders.get(merchantTransactionId);
    if (entry && entry.expiresAt <= this.#now()) {
      this.#orders.delete(merchantTransactionId);
      return undefined;
    }
    return entry?.record;
  }
}
