// The read-modify-write steps of the session store, as Lua scripts: Redis runs a script atomically, so
// two instances settling the same session at once cannot both win, and no WATCH/retry loop is needed.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { redisCommand } from './errors.ts';

/** A Lua script with its SHA-1, sent by hash and loaded on first use (or after a Redis restart). */
export interface RedisScript {
  readonly source: string;
  readonly sha: string;
}

export function script(source: string): RedisScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

// Reply of the session scripts: false for an unknown session, else {changed, base, state, outcome|false}.
// Times come from the caller (ARGV) so every instance and the in-memory store share one notion of "now":
// a session is expired from `expiresAt` on (now >= expiresAt), as in memory/session-store.ts.

/**
 * KEYS[1] session hash, KEYS[2] notification reference; ARGV[1] base JSON, ARGV[2] state, ARGV[3]
 * expiresAt, ARGV[4] TTL ms, ARGV[5] outcome JSON or '', ARGV[6] sessionId. Refuses an id that exists (ids are random, so
 * a clash means a bug, and overwriting would lose an outcome). Session and reference appear together.
 */
export const CREATE = script(`
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('session id already exists') end
redis.call('HSET', KEYS[1], 'base', ARGV[1], 'state', ARGV[2], 'expiresAt', ARGV[3])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'outcome', ARGV[5]) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('SET', KEYS[2], ARGV[6], 'PX', ARGV[4])
return 1
`);

/**
 * KEYS[1] session hash; ARGV[1] outcome JSON, ARGV[2] its terminal state, ARGV[3] now (epoch ms).
 * First terminal outcome wins; a session past its expiry takes none.
 */
export const SETTLE = script(`
local f = redis.call('HMGET', KEYS[1], 'base', 'state', 'outcome', 'expiresAt')
if not f[1] then return false end
local s = f[2]
if s == 'succeeded' or s == 'failed' or s == 'expired' or tonumber(ARGV[3]) >= tonumber(f[4]) then
  return {0, f[1], s, f[3]}
end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'outcome', ARGV[1])
return {1, f[1], ARGV[2], ARGV[1]}
`);

/** KEYS[1] session hash; ARGV[1] now (epoch ms). `pending` → `returned` while the session is live. */
export const MARK_RETURNED = script(`
local f = redis.call('HMGET', KEYS[1], 'base', 'state', 'outcome', 'expiresAt')
if not f[1] then return false end
if f[2] == 'pending' and tonumber(ARGV[1]) < tonumber(f[4]) then
  redis.call('HSET', KEYS[1], 'state', 'returned')
  return {1, f[1], 'returned', f[3]}
end
return {0, f[1], f[2], f[3]}
`);

/** KEYS[1] idempotency key; ARGV[1] the pending marker. Deletes the key only while it is still pending. */
export const RELEASE_IF_PENDING = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/** KEYS[1] idempotency key; ARGV[1] the pending marker, ARGV[2] TTL ms. Extends the lease of a claim still pending. */
export const RENEW_IF_PENDING = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`);

/** KEYS[1] marker; ARGV[1] value, ARGV[2] TTL ms. Sets the marker unless it is set; returns what it holds. */
export const MARK = script(`
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
`);

/**
 * Runs `s` by hash, loading it when Redis does not know it (first use, or Redis restarted).
 * @throws SessionBackendUnavailableError while Redis is unreachable.
 */
export function runScript(redis: Redis, s: RedisScript, keys: string[], args: string[]): Promise<unknown> {
  return redisCommand(evalScript(redis, s, keys, args));
}

async function evalScript(redis: Redis, s: RedisScript, keys: string[], args: string[]): Promise<unknown> {
  try {
    return await redis.evalsha(s.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return redis.eval(s.source, keys.length, ...keys, ...args);
  }
}
