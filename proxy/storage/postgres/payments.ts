// Payments on PostgreSQL, shared by every instance: one row per order, its primary key the merchant
// transaction id, so two claims of one order — on any instances, at the same moment — can never both
// win (the second INSERT meets the first's row, waits for its transaction, and takes the record it
// left). A claim and its Idempotency-Key commit together; every change is durable before it resolves
// (the server's commit: database.ts), so the provider is called only once the claim is, and the
// merchant is told a result only once it is. A claim that replaces a payment reconciled `not-charged`
// moves it to `earlier_payments` in the same transaction.
import { forgottenPayment } from '../forgotten.ts';
import {
  leaseExpired,
  PaymentRecord,
  reconciled,
  type ClaimResult,
  type PaymentStore,
  type Reconciliation,
} from '../payments.ts';
import type { Database, Tx } from './database.ts';

export class PostgresPaymentStore implements PaymentStore {
  readonly #db: Database;
  readonly #now: () => number;

  constructor(db: Database, options: { now?: (() => number) | undefined } = {}) {
    this.#db = db;
    this.#now = options.now ?? Date.now;
  }

  async claim(pending: PaymentRecord, retentionMs: number): Promise<ClaimResult> {
    const now = this.#now();
    const outcome = await this.#db.transaction(
      async (tx): Promise<ClaimResult> => {
        // A payment reconciled not-charged, locked: a second claim of the order waits here for this one's
        // commit, then finds the row pending and no longer matching (READ COMMITTED re-reads it).
        const [replaced] = await tx.query<{ record: string }>(
          `SELECT record FROM payments
        WHERE merchant_transaction_id = $1 AND purge_at > $2 AND state = 'not-charged' FOR UPDATE`,
          [pending.merchantTransactionId, now],
        );
        // A row past its retention (not yet swept) is an order forgotten: it may be claimed again; so may one
        // reconciled as charging nothing (storage/payments.ts claimable).
        const [claimed] = await tx.query(
          `INSERT INTO payments (merchant_transaction_id, payment_id, state, lease_expires_at, record, purge_at)
        VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (merchant_transaction_id) DO UPDATE SET payment_id = excluded.payment_id, state = excluded.state,
          lease_expires_at = excluded.lease_expires_at, record = excluded.record, purge_at = excluded.purge_at
        WHERE payments.purge_at <= $7 OR payments.state = 'not-charged'
        RETURNING 1 AS one`,
          [...paymentColumns(pending), now + retentionMs, now],
        );
        if (!claimed) {
          const existing = await read(tx, pending.merchantTransactionId, now);
          if (existing) return { claimed: false, existing };
          throw new Error(`payment of ${pending.merchantTransactionId} neither claimed nor found`);
        }
        if (replaced) {
          const earlier = PaymentRecord.parse(JSON.parse(replaced.record));
          await tx.query(
            'INSERT INTO earlier_payments (merchant_transaction_id, payment_id, record, purge_at) VALUES ($1, $2, $3, $4)',
            [earlier.merchantTransactionId, earlier.paymentId, replaced.record, now + retentionMs],
          );
        }
        const key = pending.idempotencyKey;
        if (key === undefined) return { claimed: true };
        const [keyed] = await tx.query<{ merchant_transaction_id: string }>(
          `INSERT INTO payment_keys (idempotency_key, merchant_transaction_id, purge_at)
        VALUES ($1, $2, $3)
        ON CONFLICT (idempotency_key) DO UPDATE SET merchant_transaction_id = excluded.merchant_transaction_id, purge_at = excluded.purge_at
        WHERE payment_keys.purge_at <= $4 OR payment_keys.merchant_transaction_id = excluded.merchant_transaction_id
        RETURNING merchant_transaction_id`,
          [key, pending.merchantTransactionId, now + retentionMs, now],
        );
        if (keyed) return { claimed: true };
        const [other] = await tx.query<{ merchant_transaction_id: string }>(
          'SELECT merchant_transaction_id FROM payment_keys WHERE idempotency_key = $1',
          [key],
        );
        return { claimed: false, keyUsedFor: other?.merchant_transaction_id ?? '' };
      },
      { commitIf: (result) => result.claimed },
    );
    return outcome;
  }

  async get(merchantTransactionId: string): Promise<PaymentRecord | undefined> {
    const [row] = await this.#db.query<{ record: string }>(
      'SELECT record FROM payments WHERE merchant_transaction_id = $1 AND purge_at > $2',
      [merchantTransactionId, this.#now()],
    );
    return row && PaymentRecord.parse(JSON.parse(row.record));
  }

  async earlier(merchantTransactionId: string): Promise<PaymentRecord[]> {
    const rows = await this.#db.query<{ record: string }>(
      `SELECT record FROM earlier_payments
      WHERE merchant_transaction_id = $1 AND purge_at > $2 ORDER BY id`,
      [merchantTransactionId, this.#now()],
    );
    return rows.map((row) => PaymentRecord.parse(JSON.parse(row.record)));
  }

  async finish(record: PaymentRecord, retentionMs: number): Promise<boolean> {
    const now = this.#now();
    // Held by this payment, neither completed nor reconciled not-charged (storage/payments.ts heldBy), in the UPDATE's own condition.
    const rows = await this.#db.query(
      `UPDATE payments SET state = $3, lease_expires_at = $4, record = $5, purge_at = $6
      WHERE merchant_transaction_id = $1 AND payment_id = $2 AND state NOT IN ('completed', 'not-charged') AND purge_at > $7 RETURNING 1 AS one`,
      [
        record.merchantTransactionId,
        record.paymentId,
        record.state,
        leaseOf(record),
        JSON.stringify(record),
        now + retentionMs,
        now,
      ],
    );
    return rows.length === 1;
  }

  async release(merchantTransactionId: string, paymentId: string): Promise<boolean> {
    const rows = await this.#db.query(
      `DELETE FROM payments WHERE merchant_transaction_id = $1 AND payment_id = $2
      AND state NOT IN ('completed', 'not-charged') AND purge_at > $3 RETURNING 1 AS one`,
      [merchantTransactionId, paymentId, this.#now()],
    );
    return rows.length === 1;
  }

  async reconcile(
    merchantTransactionId: string,
    paymentId: string,
    reconciliation: Reconciliation,
    retentionMs: number,
  ): Promise<PaymentRecord | undefined> {
    const now = this.#now();
    return this.#db.transaction(async (tx) => {
      const [row] = await tx.query<{ record: string }>(
        'SELECT record FROM payments WHERE merchant_transaction_id = $1 AND purge_at > $2 FOR UPDATE',
        [merchantTransactionId, now],
      );
      const after = reconciled(row && PaymentRecord.parse(JSON.parse(row.record)), paymentId, reconciliation);
      if (!after) return undefined;
      await tx.query(
        `UPDATE payments SET state = $2, lease_expires_at = NULL, record = $3, purge_at = $4 WHERE merchant_transaction_id = $1`,
        [merchantTransactionId, after.state, JSON.stringify(after), now + retentionMs],
      );
      return after;
    });
  }

  /**
   * Each expired lease is taken by exactly one call, on whichever instance: the rows are locked with
   * SKIP LOCKED (another instance's look passes over them) and changed in the same statement.
   */
  async expireLeases(nowMs: number, max: number): Promise<PaymentRecord[]> {
    const rows = await this.#db.query<{ record: string }>(
      `WITH due AS (
        SELECT merchant_transaction_id FROM payments WHERE state = 'pending' AND lease_expires_at <= $1
        ORDER BY lease_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
      UPDATE payments SET state = 'unknown', lease_expires_at = NULL,
        record = ((payments.record::jsonb - 'leaseExpiresAt') || jsonb_build_object('state', 'unknown'))::text
      FROM due WHERE payments.merchant_transaction_id = due.merchant_transaction_id RETURNING payments.record`,
      [nowMs, max],
    );
    // The row says so already (leaseExpired is the same change, made here for the type).
    const expired = rows.map((row) => leaseExpired(PaymentRecord.parse(JSON.parse(row.record))));
    return expired;
  }

  /** The storage bundle closes the pool. */
  /** Scans of both tables (no index on the user), in one transaction: an erasure is rare. */
  async forgetUser(merchantUserId: string): Promise<number> {
    const forget = (record: string) => JSON.stringify(forgottenPayment(PaymentRecord.parse(JSON.parse(record))));
    return this.#db.transaction(async (tx) => {
      let rewritten = 0;
      for (const table of ['payments', 'earlier_payments'] as const) {
        const rows = await tx.query<{ ctid: string; record: string }>(
          `SELECT ctid::text AS ctid, record FROM ${table} WHERE record::jsonb ->> 'merchantUserId' = $1 FOR UPDATE`,
          [merchantUserId],
        );
        for (const row of rows)
          await tx.query(`UPDATE ${table} SET record = $1 WHERE ctid = $2::tid`, [forget(row.record), row.ctid]);
        rewritten += rows.length;
      }
      return rewritten;
    });
  }

  async close(): Promise<void> {}
}

function leaseOf(record: PaymentRecord): number | null {
  return record.state === 'pending' ? (record.leaseExpiresAt ?? 0) : null;
}

function paymentColumns(record: PaymentRecord): unknown[] {
  return [record.merchantTransactionId, record.paymentId, record.state, leaseOf(record), JSON.stringify(record)];
}

async function read(tx: Tx, merchantTransactionId: string, now: number): Promise<PaymentRecord | undefined> {
  const [row] = await tx.query<{ record: string }>(
    'SELECT record FROM payments WHERE merchant_transaction_id = $1 AND purge_at > $2',
    [merchantTransactionId, now],
  );
  return row && PaymentRecord.parse(JSON.parse(row.record));
}
