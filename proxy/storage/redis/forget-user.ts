// What forgetting a merchant user (storage/forgotten.ts) needs on Redis, which keeps no index by user (but
// for the outbox's events: outbox.ts):
// the keys of one kind found with SCAN (an erasure is rare; each step reads a bounded batch), and
// rewrites that change a value only if no one changed it since it was read (a compare-and-set script),
// keeping its time to live.
import type { Redis } from 'ioredis';
import { redisCommand } from './errors.ts';
import { runScript, script } from './scripts.ts';

/** Keys read per SCAN step. */
const SCAN_COUNT = 500;

/** `text` as a SCAN pattern matching itself only (glob's special characters escaped). */
export const literalPattern = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');

/** Every key matching `pattern` (SCAN: a key present throughout is returned at least once; de-duplicated here). */
export async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const found = new Set<string>();
  let cursor = '0';
  do {
    const [next, keys] = await redisCommand(redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT));
    for (const key of keys) found.add(key);
    cursor = next;
  } while (cursor !== '0');
  return [...found];
}

/** KEYS[1] a string; ARGV[1] the value read, ARGV[2] the new one. Replaced (time to live kept) only if unchanged. */
const SWAP_STRING = script(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
`);

/** KEYS[1] a hash; ARGV[1] its field, ARGV[2] the value read, ARGV[3] the new one. Replaced only if unchanged. */
const SWAP_FIELD = script(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`);

/** KEYS[1] a list; ARGV[1] an index, ARGV[2] the item read there, ARGV[3] the new one. Replaced only if unchanged. */
const SWAP_ITEM = script(`
if redis.call('LINDEX', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('LSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`);

/** A rewrite that lost a race to another change is read again, at most this many times. */
const SWAP_TRIES = 5;

/**
 * Rewrites the value `read()` gives with `change` (undefined: nothing to change) by `swap` (a
 * compare-and-set), reading again after a concurrent change. True when it changed something.
 */
async function rewrite(
  read: () => Promise<string | null>,
  change: (value: string) => string | undefined,
  swap: (old: string, value: string) => Promise<unknown>,
): Promise<boolean> {
  for (let attempt = 0; attempt < SWAP_TRIES; attempt++) {
    const old = await read();
    const value = old === null ? undefined : change(old);
    if (old === null || value === undefined) return false;
    if ((await swap(old, value)) === 1) return true;
  }
  throw new Error('a record kept changing while it was being forgotten; try again');
}

export const rewriteString = (redis: Redis, key: string, change: (value: string) => string | undefined) =>
  rewrite(
    () => redisCommand(redis.get(key)),
    change,
    (old, value) => runScript(redis, SWAP_STRING, [key], [old, value]),
  );

export const rewriteField = (redis: Redis, key: string, field: string, change: (value: string) => string | undefined) =>
  rewrite(
    () => redisCommand(redis.hget(key, field)),
    change,
    (old, value) => runScript(redis, SWAP_FIELD, [key], [field, old, value]),
  );

export const rewriteItem = (redis: Redis, key: string, index: number, change: (value: string) => string | undefined) =>
  rewrite(
    () => redisCommand(redis.lindex(key, index)),
    change,
    (old, value) => runScript(redis, SWAP_ITEM, [key], [String(index), old, value]),
  );
