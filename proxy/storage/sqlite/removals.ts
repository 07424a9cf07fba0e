// Saved-account removals on SQLite, acknowledged once durable (the handle's `synced()`, database.ts): a
// removal the shopper was told about holds, even through a power loss.
import { FORGOTTEN_USER } from '../forgotten.ts';
import { SavedAccountRemoval, type RemovalStore } from '../removals.ts';
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
      deleteUser: prepare(
        handle.db,
        'DELETE FROM saved_account_removals WHERE merchant_user_id = ? AND account_id != ?',
      ),
      putCutOff: prepare(
        handle.db,
        'INSERT OR REPLACE INTO saved_account_removals (merchant_user_id, account_id, record) VALUES (?, ?, ?)',
      ),
      read: prepare<[string, string], { record: string }>(
        handle.db,
        'SELECT record FROM saved_account_removals WHERE merchant_user_id = ? AND account_id = ?',
      ),
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

  async forgetUser(merchantUserId: string, at: string): Promise<number> {
    const cutOff: SavedAccountRemoval = { merchantUserId, accountId: FORGOTTEN_USER, removedAt: at };
    const erased = this.#handle.transaction(() => {
      const { changes } = this.#statements.deleteUser.run(merchantUserId, FORGOTTEN_USER);
      this.#statements.putCutOff.run(merchantUserId, FORGOTTEN_USER, JSON.stringify(cutOff));
      return Number(changes);
    });
    await this.#handle.synced();
    return erased;
  }

  async forgottenAt(merchantUserId: string): Promise<string | undefined> {
    const row = this.#statements.read.get(merchantUserId, FORGOTTEN_USER);
    return row && SavedAccountRemoval.parse(JSON.parse(row.record)).removedAt;
  }

  async close(): Promise<void> {}
}
