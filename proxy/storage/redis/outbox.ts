// The outbox on Redis, shared by every instance: events, their order, their delivery and their jobs live
// in Redis, so pending deliveries survive a restart or a killed instance, and a job is leased to one
// instance at a time (claiming moves its due time past the lease; finishing or postponing it ends the
// lease). Each read-modify-write step is one Lua script, atomic across instances. Besides the log (every
// event by sequence number) two sets index the undelivered ones by sequence number, so a list filtered
// to them reads only them.
import type { Redis } from 'ioredis';
import { redisCommand } from './errors.ts';
import type { RedisKeys } from './keys.ts';
import { runScript, script } from './scripts.ts';
import type { MoneyWrites } from './replicas.ts';
import type {
  AttemptOutcome,
  EventDelivery,
  EventOutbox,
  ListQuery,
  OutboxBacklog,
  OutboxJob,
  StoredEvent,
} from '../outbox.ts';
import {
  CLEAR_OUTBOX_CODEC,
  decodeEvent,
  deliverKey,
  encodeEvent,
  forgottenStoredEvent,
  isClearBody,
  jobKey,
  parseJobKey,
  type OutboxCodec,
} from '../outbox.ts';
import type { MerchantEvent } from '../events.ts';
import { EVENT_RETENTION_MS } from '../../config/limits.ts';

/** An event's hash fields as the scripts return them, in this order (`decode` reads them). */
const FIELDS = "'event', 'attempts', 'status', 'next', 'at', 'by', 'last', 'err'";
const FIELD_COUNT = 8;
/** Event ids read per step when sealing the events stored in the clear. */
const SEAL_STEP = 500;
/** A rewrite that lost a race to another change is read again, at most this many times. */
const SWAP_TRIES = 5;

/**
 * KEYS[1] event hash, KEYS[2] log, KEYS[3] sequence, KEYS[4] jobs, KEYS[5] pending, KEYS[6] pending by
 * sequence, KEYS[7] the user's events; ARGV[1] id, ARGV[2] the event as stored (sealed), ARGV[3] now,
 * ARGV[4] retention ms, ARGV[5] the delivery job, ARGV[6] the user tag ('' when it names no user).
 * The sequence number is taken and the log written in one step, so the log's order is the order events
 * were recorded in, whichever instance recorded them: a reader that saw event N can never later find an
 * event before N appear.
 */
const APPEND = script(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local seq = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[1], 'event', ARGV[2], 'seq', seq, 'attempts', 0, 'status', 'pending', 'next', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], seq, ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[5])
redis.call('ZADD', KEYS[5], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[6], seq, ARGV[1])
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[1], 'user', ARGV[6])
  redis.call('SADD', KEYS[7], ARGV[1])
  redis.call('PEXPIRE', KEYS[7], ARGV[4])
end
return 1
`);

/**
 * KEYS[1] log; ARGV[1] first, ARGV[2] last index in the log, ARGV[3] the event keys' prefix. How many ids
 * the range held, then those whose stored event is in the clear (JSON): one round trip per step.
 */
const CLEAR_IN_RANGE = script(`
local ids = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2])
local out = { #ids }
for _, id in ipairs(ids) do
  local stored = redis.call('HGET', ARGV[3] .. id, 'event')
  if stored and string.sub(stored, 1, 1) == '{' then table.insert(out, id) end
end
return out
`);

/**
 * KEYS[1] event hash, KEYS[2] the user's events under the new tag; ARGV[1] the stored event read,
 * ARGV[2] the new one, ARGV[3] its user tag or '', ARGV[4] id, ARGV[5] retention ms. Replaced only if
 * unchanged since it was read (a compare-and-set: forgetUser and the start-up's sealing may race).
 */
const SWAP_EVENT = script(`
if redis.call('HGET', KEYS[1], 'event') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'event', ARGV[2])
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'user', ARGV[3])
  redis.call('SADD', KEYS[2], ARGV[4])
  if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[5]) then redis.call('PEXPIRE', KEYS[2], ARGV[5]) end
end
return 1
`);

/** KEYS[1] jobs; ARGV[1] now, ARGV[2] lease end, ARGV[3] max. Leases the due jobs it returns. */
const CLAIM = script(`
local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, job in ipairs(jobs) do redis.call('ZADD', KEYS[1], 'XX', ARGV[2], job) end
return jobs
`);

/** The keys every delivery change takes: KEYS[1] event hash, KEYS[2] jobs, KEYS[3] pending, KEYS[4] pending by sequence, KEYS[5] failed by sequence. */
const LEAVE_PENDING = `
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
`;

/**
 * ARGV[1] id, ARGV[2] job, ARGV[3] now, ARGV[4] '1' delivered / '0' given up, ARGV[5] the reason. The
 * last attempt of a pending event; only its job is removed when the event is no longer pending.
 */
const SETTLE = script(`
redis.call('ZREM', KEYS[2], ARGV[2])
local f = redis.call('HMGET', KEYS[1], 'status', 'seq')
if not f[1] then
  ${LEAVE_PENDING}
  return 0
end
if f[1] ~= 'pending' then return 0 end
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HDEL', KEYS[1], 'next')
if ARGV[4] == '1' then
  redis.call('HSET', KEYS[1], 'status', 'delivered', 'at', ARGV[3], 'by', 'endpoint', 'last', ARGV[3])
else
  redis.call('HSET', KEYS[1], 'status', 'failed', 'last', ARGV[3], 'err', ARGV[5])
  redis.call('ZADD', KEYS[5], f[2], ARGV[1])
end
${LEAVE_PENDING}
return 1
`);

/** ARGV[1] id, ARGV[2] job. Removes the delivery job; for an event that is gone (past the retention), its index entries too. */
const DROP_DELIVERY = script(`
redis.call('ZREM', KEYS[2], ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 0 then
  ${LEAVE_PENDING}
  redis.call('ZREM', KEYS[5], ARGV[1])
end
return 1
`);

/** KEYS[1] event hash, KEYS[2] jobs; ARGV[1] when, ARGV[2] job, ARGV[3] now, ARGV[4] the reason. Counts the failed attempt of a pending event, re-queues. */
const RETRY = script(`
if redis.call('HGET', KEYS[1], 'status') ~= 'pending' then return 0 end
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HSET', KEYS[1], 'next', ARGV[1], 'last', ARGV[3], 'err', ARGV[4])
redis.call('ZADD', KEYS[2], 'XX', ARGV[1], ARGV[2])
return 1
`);

/** ARGV[1] id, ARGV[2] job, ARGV[3] now. Delivered by the API unless already delivered; the event's fields after. */
const ACKNOWLEDGE = script(`
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return false end
if status ~= 'delivered' then
  redis.call('HSET', KEYS[1], 'status', 'delivered', 'at', ARGV[3], 'by', 'api')
  redis.call('HDEL', KEYS[1], 'next')
  redis.call('ZREM', KEYS[2], ARGV[2])
  ${LEAVE_PENDING}
  redis.call('ZREM', KEYS[5], ARGV[1])
end
return redis.call('HMGET', KEYS[1], ${FIELDS})
`);

/**
 * ARGV[1] id, ARGV[2] job, ARGV[3] now. A new delivery of a delivered or failed event; a pending one's
 * next attempt moved to now unless one is due or under way. The event's fields after.
 */
const REDELIVER = script(`
local f = redis.call('HMGET', KEYS[1], 'status', 'seq', 'next')
if not f[1] then return false end
if f[1] ~= 'pending' then
  redis.call('HSET', KEYS[1], 'status', 'pending', 'attempts', 0, 'next', ARGV[3])
  redis.call('HDEL', KEYS[1], 'at', 'by', 'last', 'err')
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
  redis.call('ZADD', KEYS[4], f[2], ARGV[1])
  redis.call('ZREM', KEYS[5], ARGV[1])
elseif not f[3] or tonumber(f[3]) > tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'next', ARGV[3])
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
end
return redis.call('HMGET', KEYS[1], ${FIELDS})
`);

/**
 * KEYS[1] log, KEYS[2] failed by sequence; ARGV[1] the event keys' prefix, ARGV[2] how many to look at.
 * Events expire (their hash's TTL is the retention) oldest first: drops the head entries whose event is gone.
 */
const TRIM = script(`
for _, key in ipairs(KEYS) do
  for _, id in ipairs(redis.call('ZRANGE', key, 0, tonumber(ARGV[2]) - 1)) do
    if redis.call('EXISTS', ARGV[1] .. id) == 1 then break end
    redis.call('ZREM', key, id)
  end
end
return 1
`);

/** How many log entries one trim looks at (bounded work per script; the worker trims every minute). */
const TRIM_BATCH = 1_000;

/**
 * KEYS[1] log, KEYS[2] pending by sequence, KEYS[3] failed by sequence; ARGV[1] after id or '', ARGV[2]
 * how many, ARGV[3] the event keys' prefix, ARGV[4] '' (every event), 'pending', 'failed' or
 * 'undelivered'. The events after `after` (false when it is not in the log) in the order recorded, read
 * from the log or from the sets of the states asked for (merged by sequence number), each as its fields;
 * any whose hash already expired is skipped.
 */
const LIST = script(`
local from = '-inf'
if ARGV[1] ~= '' then
  local seq = redis.call('ZSCORE', KEYS[1], ARGV[1])
  if not seq then return false end
  from = '(' .. seq
end
local count = tonumber(ARGV[2])
local ids
if ARGV[4] == '' then ids = redis.call('ZRANGEBYSCORE', KEYS[1], from, '+inf', 'LIMIT', 0, count)
elseif ARGV[4] == 'pending' then ids = redis.call('ZRANGEBYSCORE', KEYS[2], from, '+inf', 'LIMIT', 0, count)
elseif ARGV[4] == 'failed' then ids = redis.call('ZRANGEBYSCORE', KEYS[3], from, '+inf', 'LIMIT', 0, count)
else
  local a = redis.call('ZRANGEBYSCORE', KEYS[2], from, '+inf', 'WITHSCORES', 'LIMIT', 0, count)
  local b = redis.call('ZRANGEBYSCORE', KEYS[3], from, '+inf', 'WITHSCORES', 'LIMIT', 0, count)
  ids = {}
  local i, j = 1, 1
  while #ids < count and (i <= #a or j <= #b) do
    if j > #b or (i <= #a and tonumber(a[i + 1]) < tonumber(b[j + 1])) then
      table.insert(ids, a[i]); i = i + 2
    else
      table.insert(ids, b[j]); j = j + 2
    end
  end
end
local out = {}
for _, id in ipairs(ids) do
  local f = redis.call('HMGET', ARGV[3] .. id, ${FIELDS})
  if f[1] then
    table.insert(out, id)
    for _, value in ipairs(f) do table.insert(out, value) end
  end
end
return out
`);

type Fields = (string | null)[];

/** One event from its hash fields (FIELDS' order). */
function decode(codec: OutboxCodec, eventId: string, fields: Fields): StoredEvent {
  const [body, attempts, status, next, at, by, last, err] = fields;
  const state = status === 'delivered' || status === 'failed' ? status : 'pending';
  const delivery: EventDelivery = { state, attempts: Number(attempts ?? 0) };
  if (state === 'pending' && next) delivery.nextAttemptAt = Number(next);
  if (state === 'delivered' && at) delivery.deliveredAt = Number(at);
  if (state === 'delivered' && (by === 'endpoint' || by === 'api')) delivery.acknowledgedBy = by;
  if (last) delivery.lastAttemptAt = Number(last);
  if (err) delivery.lastError = err;
  return { ...decodeEvent(codec, eventId, body!), delivery };
}

export class RedisEventOutbox implements EventOutbox {
  readonly #retentionMs: number;
  readonly #codec: OutboxCodec;
  /** The start-up pass sealing the events an earlier release stored in the clear; forgetUser waits for it. */
  #sealing: Promise<void> | undefined;
  readonly #money: MoneyWrites | undefined;

  /**
   * `redis`: a commands connection someone else owns (the session store's); `close` leaves it open.
   * `money`: where an append goes and waits for the replicas asked for (replicas.ts); default `redis`, no wait.
   */
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    options: {
      retentionMs?: number;
      codec?: OutboxCodec | undefined;
      onSealFailed?: (error: unknown) => void;
      money?: MoneyWrites | undefined;
    } = {},
  ) {
    this.#retentionMs = options.retentionMs ?? EVENT_RETENTION_MS;
    this.#codec = options.codec ?? CLEAR_OUTBOX_CODEC;
    this.#money = options.money;
    if (this.#codec.seals) {
      // In the background; a failure (Redis away) is tried again by forgetUser.
      this.#sealing = this.#sealClearEvents().catch((error: unknown) => {
        this.#sealing = undefined;
        options.onSealFailed?.(error);
      });
    }
  }

  /**
   * Seals the events an earlier release stored in the clear, tagging and indexing them by their user:
   * the log read in steps of 500 (a script returns those in the clear), each a compare-and-set (another
   * instance may be sealing it too).
   */
  async #sealClearEvents(): Promise<void> {
    for (let start = 0; ; start += SEAL_STEP) {
      const [read, ...clear] = (await runScript(
        this.redis,
        CLEAR_IN_RANGE,
        [this.keys.merchantEventLog],
        [String(start), String(start + SEAL_STEP - 1), this.keys.merchantEvent('')],
      )) as [number, ...string[]];
      for (const id of clear)
        await this.#rewrite(id, (stored) =>
          isClearBody(stored) ? decodeEvent(this.#codec, id, stored).event : undefined,
        );
      if (read < SEAL_STEP) return;
    }
  }

  /**
   * Stores `change`'s event in place of the one read (undefined: nothing to change), reading again after
   * a concurrent change. True when it changed something.
   */
  async #rewrite(eventId: string, change: (stored: string) => MerchantEvent | undefined): Promise<boolean> {
    const key = this.keys.merchantEvent(eventId);
    for (let attempt = 0; attempt < SWAP_TRIES; attempt++) {
      const old = await redisCommand(this.redis.hget(key, 'event'));
      const event = old === null ? undefined : change(old);
      if (old === null || event === undefined) return false;
      const { stored, userTag } = encodeEvent(this.#codec, event);
      const swapped = await runScript(
        this.redis,
        SWAP_EVENT,
        [key, this.keys.merchantEventsOfUser(userTag ?? '')],
        [old, stored, userTag ?? '', eventId, String(this.#retentionMs)],
      );
      if (swapped === 1) return true;
    }
    throw new Error('an event kept changing while it was being rewritten; try again');
  }

  /** The keys of a script that changes an event's delivery (LEAVE_PENDING's order). */
  #deliveryKeys(eventId: string): string[] {
    const { keys } = this;
    return [
      keys.merchantEvent(eventId),
      keys.merchantEventJobs,
      keys.merchantEventsPending,
      keys.merchantEventsPendingSeq,
      keys.merchantEventsFailedSeq,
    ];
  }

  async append(event: MerchantEvent, nowMs: number): Promise<boolean> {
    const { keys } = this;
    const { stored, userTag } = encodeEvent(this.#codec, event);
    const reply = await runScript(
      this.#money?.redis ?? this.redis,
      APPEND,
      [
        keys.merchantEvent(event.id),
        keys.merchantEventLog,
        keys.merchantEventSeq,
        keys.merchantEventJobs,
        keys.merchantEventsPending,
        keys.merchantEventsPendingSeq,
        keys.merchantEventsOfUser(userTag ?? ''),
      ],
      [event.id, stored, String(nowMs), String(this.#retentionMs), deliverKey(event.id), userTag ?? ''],
    );
    // An event told as appended is on the replicas asked for (a retried append that finds it: fenced).
    if (reply === 1) await this.#money?.replicated();
    else await this.#money?.fence();
    return reply === 1;
  }

  async scheduleSessionCheck(sessionId: string, atMs: number): Promise<void> {
    await redisCommand(
      this.redis.zadd(this.keys.merchantEventJobs, 'NX', atMs, jobKey({ kind: 'session-check', sessionId })),
    );
  }

  async claimDue(nowMs: number, leaseMs: number, max: number): Promise<OutboxJob[]> {
    const reply = await runScript(
      this.redis,
      CLAIM,
      [this.keys.merchantEventJobs],
      [String(nowMs), String(nowMs + leaseMs), String(max)],
    );
    return (reply as string[]).map(parseJobKey).filter((job): job is OutboxJob => job !== undefined);
  }

  async get(eventId: string): Promise<StoredEvent | undefined> {
    const fields = await redisCommand(
      this.redis.hmget(
        this.keys.merchantEvent(eventId),
        'event',
        'attempts',
        'status',
        'next',
        'at',
        'by',
        'last',
        'err',
      ),
    );
    return fields[0] ? decode(this.#codec, eventId, fields) : undefined;
  }

  async settle(eventId: string, outcome: AttemptOutcome, nowMs: number): Promise<void> {
    await runScript(this.redis, SETTLE, this.#deliveryKeys(eventId), [
      eventId,
      deliverKey(eventId),
      String(nowMs),
      outcome.ok ? '1' : '0',
      outcome.ok ? '' : outcome.error,
    ]);
  }

  async retryAt(eventId: string, error: string, nowMs: number, atMs: number): Promise<void> {
    await runScript(
      this.redis,
      RETRY,
      [this.keys.merchantEvent(eventId), this.keys.merchantEventJobs],
      [String(atMs), deliverKey(eventId), String(nowMs), error],
    );
  }

  async postpone(job: OutboxJob, atMs: number): Promise<void> {
    await redisCommand(this.redis.zadd(this.keys.merchantEventJobs, 'XX', atMs, jobKey(job)));
  }

  async finishJob(job: OutboxJob): Promise<void> {
    if (job.kind === 'deliver') {
      await runScript(this.redis, DROP_DELIVERY, this.#deliveryKeys(job.eventId), [
        job.eventId,
        deliverKey(job.eventId),
      ]);
      return;
    }
    await redisCommand(this.redis.zrem(this.keys.merchantEventJobs, jobKey(job)));
  }

  async acknowledge(eventId: string, nowMs: number): Promise<StoredEvent | undefined> {
    const reply = await runScript(this.redis, ACKNOWLEDGE, this.#deliveryKeys(eventId), [
      eventId,
      deliverKey(eventId),
      String(nowMs),
    ]);
    return Array.isArray(reply) ? decode(this.#codec, eventId, reply as Fields) : undefined;
  }

  async redeliver(eventId: string, nowMs: number): Promise<StoredEvent | undefined> {
    const reply = await runScript(this.redis, REDELIVER, this.#deliveryKeys(eventId), [
      eventId,
      deliverKey(eventId),
      String(nowMs),
    ]);
    return Array.isArray(reply) ? decode(this.#codec, eventId, reply as Fields) : undefined;
  }

  async list(query: ListQuery): Promise<{ events: StoredEvent[]; hasMore: boolean } | undefined> {
    const { keys } = this;
    const reply = await runScript(
      this.redis,
      LIST,
      [keys.merchantEventLog, keys.merchantEventsPendingSeq, keys.merchantEventsFailedSeq],
      [query.after ?? '', String(query.limit + 1), keys.merchantEvent(''), query.delivery ?? ''],
    );
    if (!Array.isArray(reply)) return undefined;
    const fields = reply as Fields;
    const events: StoredEvent[] = [];
    // Each event as its id, then its fields.
    for (let i = 0; i < fields.length; i += FIELD_COUNT + 1)
      events.push(decode(this.#codec, fields[i]!, fields.slice(i + 1, i + 1 + FIELD_COUNT)));
    return { events: events.slice(0, query.limit), hasMore: events.length > query.limit };
  }

  async backlog(): Promise<OutboxBacklog> {
    const [pending, oldest] = await Promise.all([
      redisCommand(this.redis.zcard(this.keys.merchantEventsPending)),
      redisCommand(this.redis.zrange(this.keys.merchantEventsPending, 0, 0, 'WITHSCORES')),
    ]);
    return { pending, oldestPendingAt: oldest[1] === undefined ? undefined : Number(oldest[1]) };
  }

  async trim(): Promise<void> {
    await runScript(
      this.redis,
      TRIM,
      [this.keys.merchantEventLog, this.keys.merchantEventsFailedSeq],
      [this.keys.merchantEvent(''), String(TRIM_BATCH)],
    );
  }

  /**
   * The user's events by their tags (a set per tag, one tag per sealing key), each rewritten by a
   * compare-and-set; first a sealing pass, so an event stored in the clear is indexed and found.
   */
  async forgetUser(merchantUserId: string): Promise<number> {
    // Again each time (a script per 500 events, less than the full read a forget took before bodies were
    // sealed): during a rolling upgrade an instance of the earlier release may still write clear events.
    if (this.#codec.seals) {
      await this.#sealing;
      await this.#sealClearEvents();
    }
    const ids = new Set<string>();
    for (const tag of this.#codec.userTags(merchantUserId))
      for (const id of await redisCommand(this.redis.smembers(this.keys.merchantEventsOfUser(tag)))) ids.add(id);
    let rewritten = 0;
    for (const id of ids) {
      const changed = await this.#rewrite(id, (stored) =>
        forgottenStoredEvent(this.#codec, id, stored, merchantUserId),
      );
      if (changed) rewritten++;
    }
    return rewritten;
  }

  async close(): Promise<void> {
    // The connection belongs to the session store, which closes it.
  }
}
