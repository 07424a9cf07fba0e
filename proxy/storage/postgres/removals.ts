// Saved-account removals on PostgreSQL, kept for good and shared by every instance: a removal the
// shopper was told about holds on every instance and through a failover (the server's commit).
import type { RemovalStore, SavedAccountRemoval } from '../removals.ts';
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

  async close(): Promise<void> {}
}
