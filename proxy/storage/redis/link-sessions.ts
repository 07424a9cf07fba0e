// Link sessions on Redis, shared by every instance: one JSON string per link session, its retention as TTL.
import type { Redis } from 'ioredis';
import { redisCommand } from '../../sessions/redis/errors.ts';
import type { RedisKeys } from '../../sessions/redis/keys.ts';
import { LinkSessionRecord, type LinkSessionStore } from '../link-sessions.ts';

export class RedisLinkSessionStore implements LinkSessionStore {
  constructor(private readonly redis: Redis, private readonly keys: RedisKeys) {}

  async create(id: string, record: LinkSessionRecord, retainMs: number): Promise<void> {
    const set = await redisCommand(this.redis.set(this.keys.linkSession(id), JSON.stringify(record), 'PX', Math.max(1, Math.ceil(retainMs)), 'NX'));
    if (set !== 'OK') throw new Error('link session id already exists');
  }

  async get(id: string): Promise<LinkSessionRecord | undefined> {
    const held = await redisCommand(this.redis.get(this.keys.linkSession(id)));
    return held === null ? undefined : LinkSessionRecord.parse(JSON.parse(held));
  }

  async close(): Promise<void> {}
}
