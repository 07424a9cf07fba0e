// Saved-account removals in memory (tests, and sandbox mode when chosen).
import type { RemovalStore, SavedAccountRemoval } from '../removals.ts';

const keyOf = (merchantUserId: string, accountId: string) => JSON.stringify([merchantUserId, accountId]);

export class MemoryRemovalStore implements RemovalStore {
  readonly #removals = new Map<string, SavedAccountRemoval>();

  async record(removal: SavedAccountRemoval): Promise<boolean> {
    const key = keyOf(removal.merchantUserId, removal.accountId);
    if (this.#removals.has(key)) return false;
    this.#removals.set(key, { ...removal });
    return true;
  }

  async isRemoved(merchantUserId: string, accountId: string): Promise<boolean> {
    return this.#removals.has(keyOf(merchantUserId, accountId));
  }

  async forget(merchantUserId: string, accountId: string): Promise<void> {
    this.#removals.delete(keyOf(merchantUserId, accountId));
  }

  async close(): Promise<void> {
    this.#removals.clear();
  }
}
