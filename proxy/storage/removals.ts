// Saved accounts a shopper removed, as typed records: the proxy remembers each removal itself, for every
// deployment (with or without a hook or events), so a removed account is never offered, chosen or paid
// with again, whatever copy of its sealed string the merchant's server still holds.
import { z } from 'zod';

export const SavedAccountRemoval = z.object({
  merchantUserId: z.string(),
  /** The saved account's stable id. */
  accountId: z.string(),
  /** ISO 8601. */
  removedAt: z.iso.datetime(),
  /** The order at whose checkout it was removed. */
  merchantTransactionId: z.string().optional(),
});
export type SavedAccountRemoval = z.infer<typeof SavedAccountRemoval>;

/**
 * Removals are kept for good, until the user is forgotten: a sealed saved account does not expire, so neither may the fact that the
 * shopper removed it (one short row per removal).
 */
export interface RemovalStore {
  /** Records the removal; false (changing nothing) when this account was already removed. */
  record(removal: SavedAccountRemoval): Promise<boolean>;
  /** Whether `accountId` was removed by `merchantUserId`. */
  isRemoved(merchantUserId: string, accountId: string): Promise<boolean>;
  /** Forgets a removal (the merchant's hook refused it: the account stays). */
  forget(merchantUserId: string, accountId: string): Promise<void>;
  /**
   * The user is forgotten at `at` (ISO 8601): their removals are erased and one cut-off row stands for
   * them all (accountId FORGOTTEN_USER, forgotten.ts; a later forget moves it to the later time), so every
   * saved account sealed for the user before is refused, those the proxy never saw included. Resolves to
   * the number of removals erased (0 the second time). Durable before it resolves.
   */
  forgetUser(merchantUserId: string, at: string): Promise<number>;
  /** When the user was last forgotten (ISO 8601), or undefined. */
  forgottenAt(merchantUserId: string): Promise<string | undefined>;
  close(): Promise<void>;
}
