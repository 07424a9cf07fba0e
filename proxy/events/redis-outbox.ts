// The outbox on Redis, shared by every instance: events, their order and their jobs live in Redis, so
// pending deliveries survive a restart or a killed instance, and a job is leased to one instance at a
// time (claiming moves its due time past the lease; finishing or postponing it ends the lease). Each
// read-modify-write step is one Lua script, atomic across instances.
import type { Redis } from 'ioredis';
import { redisCommand } from '../sessions/redis/errors.ts';
import type { RedisKeys } from '../sessions/redis/keys.ts';
import { runScript, script } from '../sessions/redis/scripts.ts';
import type { EventOutbox, OutboxBacklog, OutboxJob, StoredEvent } from './outbox.ts';
import { jobKey, parseJobKey } from './outbox.ts';
import type { MerchantEvent } from './shapes.ts';
import { EVENT_RETENTION_MS } from '../config/limits.ts';

/**
 * KEYS[1] event hash, KEYS[2] log, KEYS[3] sequence, KEYS[4] jobs, KEYS[5] pending; ARGV[1] id, ARGV[2]
 * event JSON, ARGV[3] now, ARGV[4] retention ms, ARGV[5] the delivery job. The sequence number is taken
 * and the log written in one step, so the log's order is the order events were recorded in, whichever
 * instance recorded them: a reader that saw event N can never later find an event before N appear.
 */
const APPEND = script(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local seq = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[1], 'event', ARGV[2], 'seq', seq, 'attempts', 0, 'status', 'pending')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], seq, ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[5])
redis.call('ZADD', KEYS[5], ARGV[3], ARGV[1])
return 1
`);

/** KEYS[1] jobs; ARGV[1] now, ARGV[2] lease end, ARGV[3] max. Leases the due jobs it returns. */
const CLAIM = script(`
local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, job in ipairs(jobs) do redis.call('ZADD', KEYS[1], 'XX', ARGV[2], job) end
return jobs
`);

/** KEYS[1] event hash, KEYS[2] jobs, KEYS[3] pending; ARGV[1] id, ARGV[2] status, ARGV[3] job. */
const SETTLE = script(`
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'status', ARGV[2]) end
redis.call('ZREM', KEYS[2], ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
`);

/** KEYS[1] event hash, KEYS[2] jobs; ARGV[1] when, ARGV[2] job. Counts the failed attempt, re-queues. */
const RETRY = script(`
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HINCRBY', KEYS[1], 'attempts', 1) end
redis.call('ZADD', KEYS[2], 'XX', ARGV[1], ARGV[2])
return 1
`);

/**
 * KEYS[1] log; ARGV[1] the event keys' prefix, ARGV[2] how many to look at. Events expire (their hash's
 * TTL is the retention) oldest first: drops the log's head entries whose event is gone.
 */
const TRIM = script(`
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)) do
  if redis.call('EXISTS', ARGV[1] .. id) == 1 then break end
  redis.call('ZREM', KEYS[1], id)
end
return 1
`);

/** How many log entries one trim looks at (bounded work per script; the worker trims every minute). */
const TRIM_BATCH = 1_000;

/**
 * KEYS[1] log; ARGV[1] after id or '', ARGV[2] how many, ARGV[3] the event keys' prefix. Lists the
 * events after `after` (false when it is not in the log), skipping any whose hash already expired.
 */
const LIST = script(`
local from = '-inf'
if ARGV[1] ~= '' then
  local seq = redis.call('ZSCORE', KEYS[1], ARGV[1])
  if not seq then return false end
  from = '(' .. seq
end
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], from, '+inf', 'LIMIT', 0, ARGV[2])) do
  local event = redis.call('HGET', ARGV[3] .. id, 'event')
  if event then table.insert(out, event) end
end
return out
`);

export class RedisEventOutbox implements EventOutbox {
  readonly #retentionMs: number;

  /** `redis`: a commands connection someone else owns (the session store's); `close` leaves it open. */
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    options: { retentionMs?: number } = {},
  ) {
    this.#retentionMs = options.retentionMs ?? EVENT_RETENTION_MS;
  }

  async append(event: MerchantEvent, nowMs: number): Promise<boolean> {
    const { keys } = this;
    const reply = await runScript(this.redis, APPEND,
      [keys.merchantEvent(event.id), keys.merchantEventLog, keys.merchantEventSeq, keys.merchantEventJobs, keys.merchantEventsPending],
      [event.id, JSON.stringify(event), String(nowMs), String(this.#retentionMs), jobKey({ kind: 'deliver', eventId: event.id })]);
    return reply === 1;
  }

  async scheduleSessionCheck(sessionId: string, atMs: number): Promise<void> {
    await redisCommand(this.redis.zadd(this.keys.merchantEventJobs, 'NX', atMs, jobKey({ kind: 'session-check', sessionId })));
  }

  async claimDue(nowMs: number, leaseMs: number, max: number): Promise<OutboxJob[]> {
    const reply = await runScript(this.redis, CLAIM, [this.keys.merchantEventJobs], [String(nowMs), String(nowMs + leaseMs), String(max)]);
    return (reply as string[]).map(parseJobKey).filter((job): job is OutboxJob => job !== undefined);
  }

  async get(eventId: string): Promise<StoredEvent | undefined> {
    const [body, attempts, status] = await redisCommand(this.redis.hmget(this.keys.merchantEvent(eventId), 'event', 'attempts', 'status'));
    if (!body) return undefined;
    return {
      event: JSON.parse(body) as MerchantEvent,
      body,
      attempts: Number(attempts ?? 0),
      status: status === 'delivered' || status === 'failed' ? status : 'pending',
    };
  }

  async settle(eventId: string, status: 'delivered' | 'failed'): Promise<void> {
    const { keys } = this;
    await runScript(this.redis, SETTLE, [keys.merchantEvent(eventId), keys.merchantEventJobs, keys.merchantEventsPending],
      [eventId, status, jobKey({ kind: 'deliver', eventId })]);
  }

  async retryAt(eventId: string, atMs: number): Promise<void> {
    await runScript(this.redis, RETRY, [this.keys.merchantEvent(eventId), this.keys.merchantEventJobs],
      [String(atMs), jobKey({ kind: 'deliver', eventId })]);
  }

  async postpone(job: OutboxJob, atMs: number): Promise<void> {
    await redisCommand(this.redis.zadd(this.keys.merchantEventJobs, 'XX', atMs, jobKey(job)));
  }

  async finishSessionCheck(sessionId: string): Promise<void> {
    await redisCommand(this.redis.zrem(this.keys.merchantEventJobs, jobKey({ kind: 'session-check', sessionId })));
  }

  async list(afterId: string | undefined, limit: number): Promise<{ events: MerchantEvent[]; hasMore: boolean } | undefined> {
    const reply = await runScript(this.redis, LIST, [this.keys.merchantEventLog], [afterId ?? '', String(limit + 1), this.keys.merchantEvent('')]);
    if (!Array.isArray(reply)) return undefined;
    const events = (reply as string[]).map((body) => JSON.parse(body) as MerchantEvent);
    return { events: events.slice(0, limit), hasMore: events.length > limit };
  }

  async backlog(): Promise<OutboxBacklog> {
    const [pending, oldest] = await Promise.all([
      redisCommand(this.redis.zcard(this.keys.merchantEventsPending)),
      redisCommand(this.redis.zrange(this.keys.merchantEventsPending, 0, 0, 'WITHSCORES')),
    ]);
    return { pending, oldestPendingAt: oldest[1] === undefined ? undefined : Number(oldest[1]) };
  }

  async trim(): Promise<void> {
    await runScript(this.redis, TRIM, [this.keys.merchantEventLog], [this.keys.merchantEvent(''), String(TRIM_BATCH)]);
  }

  async close(): Promise<void> {
    // The connection belongs to the session store, which closes it.
  }
}
