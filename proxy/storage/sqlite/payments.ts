// Payments on SQLite, for one instance. Every change is acknowledged only once it survives a power loss:
// each method commits, then awaits the handle's `synced()` (database.ts) before it resolves — a claim
// before the provider is called, a result before the merchant is told — and `get` shows the change only
// from then on (GET /transactions never reads a state a power loss could take back; a claim reads
// `pending` only once its call to the provider is under way). The claim's own check sees every commit at
// once, so two claims of one order can never both win. A claim that replaces a payment reconciled
// `not-charged` moves it to `earlier_payments` in the same transaction. At open, a claim left `pending` belonged to a
// process that is gone (one instance per file), so its lease is over now: it turns `unknown` at the next
// lease check instead of waiting out the time-out.
import {
  claimable,
  heldBy,
  leaseExpired,
  PaymentRecord,
  reconciled,
  type ClaimResult,
  type PaymentStore,
  type Reconciliation,
} from '../payments.ts';
import { forgottenPayment } from '../forgotten.ts';
import type { SqliteHandle } from './database.ts';
import { prepare } from './driver.ts';

/** Orders a transaction changed, each with its record before the change (undefined: none). */
type Changed = [order: string, before: PaymentRecord | undefined][];

export class SqlitePaymentStore implements PaymentStore {
  readonly #handle: SqliteHandle;
  readonly #now: () => number;
  readonly #statements;
  /** Orders changed by a commit not yet durable: what `get` shows meanwhile, and how many such commits. */
  readonly #unsynced = new Map<string, { before: PaymentRecord | undefined; commits: number }>();

  constructor(handle: SqliteHandle, options: { now?: () => number } = {}) {
    this.#handle = handle;
    this.#now = options.now ?? Date.now;
    const { db } = handle;
    this.#statements = {
      get: prepare<[string, number], { record: string }>(
        db,
        'SELECT record FROM payments WHERE merchant_transaction_id = ? AND purge_at > ?',
      ),
      put: prepare(
        db,
        'INSERT OR REPLACE INTO payments (merchant_transaction_id, payment_id, state, lease_expires_at, record, purge_at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      delete: prepare(db, 'DELETE FROM payments WHERE merchant_transaction_id = ?'),
      due: prepare<[number, number], { record: string }>(
        db,
        "SELECT record FROM payments WHERE state = 'pending' AND lease_expires_at <= ? ORDER BY lease_expires_at LIMIT ?",
      ),
      endLeases: prepare(
        db,
        "UPDATE payments SET lease_expires_at = ? WHERE state = 'pending' AND lease_expires_at > ?",
      ),
      keyedOrder: prepare<[string, number], { merchant_transaction_id: string }>(
        db,
        'SELECT merchant_transaction_id FROM payment_keys WHERE idempotency_key = ? AND purge_at > ?',
      ),
      putKey: prepare(
        db,
        'INSERT OR REPLACE INTO payment_keys (idempotency_key, merchant_transaction_id, purge_at) VALUES (?, ?, ?)',
      ),
      markUnknown: prepare(
        db,
        'UPDATE payments SET state = ?, lease_expires_at = NULL, record = ? WHERE merchant_transaction_id = ?',
      ),
      keepEarlier: prepare(
        db,
        'INSERT OR REPLACE INTO earlier_payments (merchant_transaction_id, payment_id, record, purge_at) VALUES (?, ?, ?, ?)',
      ),
      // Scans (no index on the user): an erasure is rare.
      ofUser: prepare<[string], { merchant_transaction_id: string; record: string }>(
        db,
        "SELECT merchant_transaction_id, record FROM payments WHERE json_extract(record, '$.merchantUserId') = ?",
      ),
      rewrite: prepare(db, 'UPDATE payments SET record = ? WHERE merchant_transaction_id = ?'),
      earlierOfUser: prepare<[string], { merchant_transaction_id: string; payment_id: string; record: string }>(
        db,
        "SELECT merchant_transaction_id, payment_id, record FROM earlier_payments WHERE json_extract(record, '$.merchantUserId') = ?",
      ),
      rewriteEarlier: prepare(
        db,
        'UPDATE earlier_payments SET record = ? WHERE merchant_transaction_id = ? AND payment_id = ?',
      ),
      earlier: prepare<[string, number], { record: string }>(
        db,
        'SELECT record FROM earlier_payments WHERE merchant_transaction_id = ? AND purge_at > ? ORDER BY rowid',
      ),
    };
    const now = this.#now();
    this.#statements.endLeases.run(now, now);
  }

  async claim(pending: PaymentRecord, retentionMs: number): Promise<ClaimResult> {
    // Also when the order was already claimed: the existing record may be another call's commit whose
    // fsync is still under way, and this answer reports it.
    const changed: Changed = [];
    const result = this.#handle.transaction(() => {
      const existing = this.#read(pending.merchantTransactionId);
      if (!claimable(existing)) return { claimed: false, existing: existing! } as const;
      const key = pending.idempotencyKey;
      if (key !== undefined) {
        const keyed = this.#statements.keyedOrder.get(key, this.#now())?.merchant_transaction_id;
        if (keyed !== undefined && keyed !== pending.merchantTransactionId)
          return { claimed: false, keyUsedFor: keyed } as const;
        this.#statements.putKey.run(key, pending.merchantTransactionId, this.#now() + retentionMs);
      }
      if (existing)
        this.#statements.keepEarlier.run(
          existing.merchantTransactionId,
          existing.paymentId,
          JSON.stringify(existing),
          this.#now() + retentionMs,
        );
      this.#put(pending, retentionMs);
      changed.push([pending.merchantTransactionId, existing]);
      return { claimed: true } as const;
    });
    // Also when nothing changed: the existing record this answer reports may be another call's commit
    // whose fsync is still under way.
    await this.#durable(changed);
    return result;
  }

  async get(merchantTransactionId: string): Promise<PaymentRecord | undefined> {
    const unsynced = this.#unsynced.get(merchantTransactionId);
    return unsynced ? unsynced.before : this.#read(merchantTransactionId);
  }

  async earlier(merchantTransactionId: string): Promise<PaymentRecord[]> {
    // Rows are written in the transaction of a claim, which `get` shows only once durable: so are they.
    if (this.#unsynced.has(merchantTransactionId)) await this.#handle.synced();
    return this.#statements.earlier
      .all(merchantTransactionId, this.#now())
      .map((row) => PaymentRecord.parse(JSON.parse(row.record)));
  }

  async finish(record: PaymentRecord, retentionMs: number): Promise<boolean> {
    const changed: Changed = [];
    const finished = this.#handle.transaction(() => {
      const before = this.#read(record.merchantTransactionId);
      if (!heldBy(before, record.paymentId)) return false;
      this.#put(record, retentionMs);
      changed.push([record.merchantTransactionId, before]);
      return true;
    });
    await this.#durable(changed);
    return finished;
  }

  async release(merchantTransactionId: string, paymentId: string): Promise<boolean> {
    const changed: Changed = [];
    const released = this.#handle.transaction(() => {
      const before = this.#read(merchantTransactionId);
      if (!heldBy(before, paymentId)) return false;
      this.#statements.delete.run(merchantTransactionId);
      changed.push([merchantTransactionId, before]);
      return true;
    });
    await this.#durable(changed);
    return released;
  }

  async reconcile(
    merchantTransactionId: string,
    paymentId: string,
    reconciliation: Reconciliation,
    retentionMs: number,
  ): Promise<PaymentRecord | undefined> {
    const changed: Changed = [];
    const record = this.#handle.transaction(() => {
      const before = this.#read(merchantTransactionId);
      const after = reconciled(before, paymentId, reconciliation);
      if (!after) return undefined;
      this.#put(after, retentionMs);
      changed.push([merchantTransactionId, before]);
      return after;
    });
    await this.#durable(changed);
    return record;
  }

  async expireLeases(nowMs: number, max: number): Promise<PaymentRecord[]> {
    const changed: Changed = [];
    const expired = this.#handle.transaction(() => {
      const due = this.#statements.due.all(nowMs, max).map((row) => PaymentRecord.parse(JSON.parse(row.record)));
      return due.map((before) => {
        const record = leaseExpired(before);
        this.#statements.markUnknown.run(record.state, JSON.stringify(record), record.merchantTransactionId);
        changed.push([record.merchantTransactionId, before]);
        return record;
      });
    });
    // The lease check runs every few seconds: it waits for an fsync only when it changed something.
    if (expired.length > 0) await this.#durable(changed);
    return expired;
  }

  /** The storage bundle closes the file. */
  async forgetUser(merchantUserId: string): Promise<number> {
    const forget = (record: string) => JSON.stringify(forgottenPayment(PaymentRecord.parse(JSON.parse(record))));
    const rewritten = this.#handle.transaction(() => {
      const current = this.#statements.ofUser.all(merchantUserId);
      for (const row of current) this.#statements.rewrite.run(forget(row.record), row.merchant_transaction_id);
      const earlier = this.#statements.earlierOfUser.all(merchantUserId);
      for (const row of earlier)
        this.#statements.rewriteEarlier.run(forget(row.record), row.merchant_transaction_id, row.payment_id);
      return current.length + earlier.length;
    });
    await this.#handle.synced();
    return rewritten;
  }

  async close(): Promise<void> {}

  /**
   * Waits until everything committed so far is durable, `get` meanwhile showing each changed order as it
   * was before (the oldest such state while several changes of one order wait). A failed fsync leaves
   * them unseen until a restart: nothing is acknowledged any more then.
   */
  async #durable(changed: Changed): Promise<void> {
    for (const [order, before] of changed) {
      const unsynced = this.#unsynced.get(order);
      if (unsynced) unsynced.commits++;
      else this.#unsynced.set(order, { before, commits: 1 });
    }
    await this.#handle.synced();
    for (const [order] of changed) {
      const unsynced = this.#unsynced.get(order)!;
      if (--unsynced.commits === 0) this.#unsynced.delete(order);
    }
  }

  #read(merchantTransactionId: string): PaymentRecord | undefined {
    const row = this.#statements.get.get(merchantTransactionId, this.#now());
    return row && PaymentRecord.parse(JSON.parse(row.record));
  }

  #put(record: PaymentRecord, retentionMs: number): void {
    this.#statements.put.run(
      record.merchantTransactionId,
      record.paymentId,
      record.state,
      record.state === 'pending' ? (record.leaseExpiresAt ?? 0) : null,
      JSON.stringify(record),
      this.#now() + retentionMs,
    );
  }
}
