// Saved-account removals on Redis, shared by every instance; kept for good (no TTL).
import type { Redis } from 'ioredis';
import { redisCommand } from './errors.ts';
import type { RedisKeys } from './keys.ts';
import { FORGOTTEN_USER } from '../forgotten.ts';
import { SavedAccountRemoval, type RemovalStore } from '../removals.ts';
import { literalPattern, scanKeys } from './forget-user.ts';

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

  async forgetUser(merchantUserId: string, at: string): Promise<number> {
    const cutOffKey = this.keys.removal(merchantUserId, FORGOTTEN_USER);
    // The user's keys all begin `removal:["<user>",`: the JSON of the user id ends with its closing quote.
    const userKeys = literalPattern(cutOffKey.slice(0, -'""]'.length)) + '*';
    const removals = (await scanKeys(this.redis, userKeys)).filter((key) => key !== cutOffKey);
    const cutOff: SavedAccountRemoval = { merchantUserId, accountId: FORGOTTEN_USER, removedAt: at };
    // The cut-off first: from then on it refuses every account the removals named.
    await redisCommand(this.redis.set(cutOffKey, JSON.stringify(cutOff)));
    return removals.length === 0 ? 0 : await redisCommand(this.redis.del(...removals));
  }

  async forgottenAt(merchantUserId: string): Promise<string | undefined> {
    const held = await redisCommand(this.redis.get(this.keys.removal(merchantUserId, FORGOTTEN_USER)));
    return held === null ? undefined : SavedAccountRemoval.parse(JSON.parse(held)).removedAt;
  }

  async close(): Promise<void> {}
}
