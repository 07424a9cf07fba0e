// Link sessions on Redis, shared by every instance: one JSON string per link session, its retention as TTL.
import type { Redis } from 'ioredis';
import { redisCommand } from './errors.ts';
import type { RedisKeys } from './keys.ts';
import { runScript, script } from './scripts.ts';
import { literalPattern, scanKeys } from './forget-user.ts';
import { LinkSessionRecord, type LinkSessionStore } from '../link-sessions.ts';

/** KEYS[1] link session, KEYS[2] its uses; ARGV[1] max. Counts a use while the session lives and has had fewer than max. */
const USE = script(`
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return 0 end
local uses = tonumber(redis.call('GET', KEYS[2]) or '0')
if uses >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[2], uses + 1, 'PX', ttl)
return 1
`);

export class RedisLinkSessionStore implements LinkSessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async create(id: string, record: LinkSessionRecord, retainMs: number): Promise<void> {
    const set = await redisCommand(
      this.redis.set(this.keys.linkSession(id), JSON.stringify(record), 'PX', Math.max(1, Math.ceil(retainMs)), 'NX'),
    );
    if (set !== 'OK') throw new Error('link session id already exists');
  }

  async get(id: string): Promise<LinkSessionRecord | undefined> {
    const held = await redisCommand(this.redis.get(this.keys.linkSession(id)));
    return held === null ? undefined : LinkSessionRecord.parse(JSON.parse(held));
  }

  async use(id: string, max: number): Promise<boolean> {
    return (
      (await runScript(this.redis, USE, [this.keys.linkSession(id), this.keys.linkSessionUses(id)], [String(max)])) ===
      1
    );
  }

  async forgetUser(merchantUserId: string): Promise<LinkSessionRecord[]> {
    const prefix = this.keys.linkSession('');
    const forgotten: LinkSessionRecord[] = [];
    for (const key of await scanKeys(this.redis, literalPattern(prefix) + '*')) {
      const held = await redisCommand(this.redis.get(key));
      const record = held === null ? undefined : LinkSessionRecord.parse(JSON.parse(held));
      if (record?.merchantUserId !== merchantUserId) continue;
      await redisCommand(this.redis.del(key, this.keys.linkSessionUses(key.slice(prefix.length))));
      forgotten.push(record);
    }
    return forgotten;
  }

  async close(): Promise<void> {}
}
