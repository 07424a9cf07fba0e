// Saved-account removals on PostgreSQL, kept for good and shared by every instance: a removal the
// shopper was told about holds on every instance and through a failover (the server's commit).
import { FORGOTTEN_USER } from '../forgotten.ts';
import { SavedAccountRemoval, type RemovalStore } from '../removals.ts';
import type { Database } from './database.ts';

export class PostgresRemovalStore implements RemovalStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async record(removal: SavedAccountRemoval): Promise<boolean> {
    const rows = await this.#db.query(
      `INSERT INTO saved_account_removals (merchant_user_id, account_id, record) VALUES ($1, $2, $3)
      ON CONFLICT DO NOTHING RETURNING 1 AS one`,
      [removal.merchantUserId, removal.accountId, JSON.stringify(removal)],
    );
    return rows.length === 1;
  }

  async isRemoved(merchantUserId: string, accountId: string): Promise<boolean> {
    const rows = await this.#db.query(
      'SELECT 1 AS one FROM saved_account_removals WHERE merchant_user_id = $1 AND account_id = $2',
      [merchantUserId, accountId],
    );
    return rows.length === 1;
  }

  async forget(merchantUserId: string, accountId: string): Promise<void> {
    await this.#db.query('DELETE FROM saved_account_removals WHERE merchant_user_id = $1 AND account_id = $2', [
      merchantUserId,
      accountId,
    ]);
  }

  async forgetUser(merchantUserId: string, at: string): Promise<number> {
    const cutOff: SavedAccountRemoval = { merchantUserId, accountId: FORGOTTEN_USER, removedAt: at };
    return this.#db.transaction(async (tx) => {
      const erased = await tx.query(
        'DELETE FROM saved_account_removals WHERE merchant_user_id = $1 AND account_id != $2 RETURNING 1 AS one',
        [merchantUserId, FORGOTTEN_USER],
      );
      await tx.query(
        `INSERT INTO saved_account_removals (merchant_user_id, account_id, record) VALUES ($1, $2, $3)
        ON CONFLICT (merchant_user_id, account_id) DO UPDATE SET record = excluded.record`,
        [merchantUserId, FORGOTTEN_USER, JSON.stringify(cutOff)],
      );
      return erased.length;
    });
  }

  async forgottenAt(merchantUserId: string): Promise<string | undefined> {
    const [row] = await this.#db.query<{ record: string }>(
      'SELECT record FROM saved_account_removals WHERE merchant_user_id = $1 AND account_id = $2',
      [merchantUserId, FORGOTTEN_USER],
    );
    return row && SavedAccountRemoval.parse(JSON.parse(row.record)).removedAt;
  }

  async close(): Promise<void> {}
}
