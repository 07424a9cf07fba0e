// Saved-account removals on SQLite, acknowledged once durable (the handle's `synced()`, database.ts): a
// removal the shopper was told about holds, even through a power loss.
import type { RemovalStore, SavedAccountRemoval } from '../removals.ts';
import type { SqliteHandle } from './database.ts';
import { prepare } from './driver.ts';

export class SqliteRemovalStore implements RemovalStore {
  readonly #handle: SqliteHandle;
  readonly #statements;

  constructor(handle: SqliteHandle) {
    this.#handle = handle;
    this.#statements = {
      insert: prepare(
        handle.db,
        'INSERT OR IGNORE INTO saved_account_removals (merchant_user_id, account_id, record) VALUES (?, ?, ?)',
      ),
      has: prepare<[string, string], { one: number }>(
        handle.db,
        'SELECT 1 AS one FROM saved_account_removals WHERE merchant_user_id = ? AND account_id = ?',
      ),
      delete: prepare(handle.db, 'DELETE FROM saved_account_removals WHERE merchant_user_id = ? AND account_id = ?'),
    };
  }

  async record(removal: SavedAccountRemoval): Promise<boolean> {
    const recorded =
      this.#statements.insert.run(removal.merchantUserId, removal.accountId, JSON.stringify(removal)).changes === 1;
    await this.#handle.synced();
    return recorded;
  }

  async isRemoved(merchantUserId: string, accountId: string): Promise<boolean> {
    return this.#statements.has.get(merchantUserId, accountId) !== undefined;
  }

  async forget(merchantUserId: string, accountId: string): Promise<void> {
    this.#statements.delete.run(merchantUserId, accountId);
    await this.#handle.synced();
  }

  async close(): Promise<void> {}
}
