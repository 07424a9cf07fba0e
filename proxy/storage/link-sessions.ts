// Link sessions as typed records: what the merchant's server said about one checkout, stored under a hash
// of the link token (link-sessions/link-sessions.ts makes and reads them). Implemented for memory, SQLite
// and Redis; test/helpers/storage-contract.ts holds them to one behaviour.
import { z } from 'zod';

/**
 * A link session's stored values. The fields the storage layer relies on are typed here; the purchase,
 * consumer and saved-account fields are the domain's (link-sessions.ts parses the whole record strictly
 * when a start reads it), kept through a round trip by the loose object.
 */
export const LinkSessionRecord = z.looseObject({
  merchantUserId: z.string(),
  merchantTransactionId: z.string(),
  createdAt: z.number(),
  expiresAt: z.number(),
});
export type LinkSessionRecord = z.infer<typeof LinkSessionRecord>;

export interface LinkSessionStore {
  /** Stores a new link session under `id`, kept `retainMs` (its lifetime and a grace, so a late start hears "expired"). */
  create(id: string, record: LinkSessionRecord, retainMs: number): Promise<void>;
  get(id: string): Promise<LinkSessionRecord | undefined>;
  /**
   * Counts one use (a start, a saved account chosen) of link session `id`; false, counting nothing, once
   * it has had `max` (atomic across instances), or when it is gone.
   */
  use(id: string, max: number): Promise<boolean>;
  /** Deletes every link session of `merchantUserId` and resolves to their records; durable before it resolves. */
  forgetUser(merchantUserId: string): Promise<LinkSessionRecord[]>;
  close(): Promise<void>;
}
