// Saved-account removals on Redis, shared by every instance; kept for good (no TTL).
import type { Redis } from 'ioredis';
import { redisCommand } from './errors.ts';
import type { RedisKeys } from './keys.ts';
import type { RemovalStore, SavedAccountRemoval } from '../removals.ts';

export class RedisRemovalStore implements RemovalStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async record(removal: SavedAccountRemoval): Promise<boolean> {
    return (
      (await redisCommand(
        this.redis.set(this.keys.removal(removal.merchantUserId, removal.accountId), JSON.stringify(removal), 'NX'),
      )) === 'OK'
    );
  }

  async isRemoved(merchantUserId: string, accountId: string): Promise<boolean> {
    return (await redisCommand(this.redis.exists(this.keys.removal(merchantUserId, accountId)))) === 1;
  }

  async forget(merchantUserId: string, accountId: string): Promise<void> {
    await redisCommand(this.redis.del(this.keys.removal(merchantUserId, accountId)));
  }

  async close(): Promise<void> {}
}
