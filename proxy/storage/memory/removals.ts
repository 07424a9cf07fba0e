// Saved-account removals in memory (tests, and sandbox mode when chosen).
import { FORGOTTEN_USER } from '../forgotten.ts';
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

  async forgetUser(merchantUserId: string, at: string): Promise<number> {
    let erased = 0;
    for (const [key, removal] of this.#removals) {
      if (removal.merchantUserId !== merchantUserId || removal.accountId === FORGOTTEN_USER) continue;
      this.#removals.delete(key);
      erased++;
    }
    this.#removals.set(keyOf(merchantUserId, FORGOTTEN_USER), {
      merchantUserId,
      accountId: FORGOTTEN_USER,
      removedAt: at,
    });
    return erased;
  }

  async forgottenAt(merchantUserId: string): Promise<string | undefined> {
    return this.#removals.get(keyOf(merchantUserId, FORGOTTEN_USER))?.removedAt;
  }

  async close(): Promise<void> {
    this.#removals.clear();
  }
}
