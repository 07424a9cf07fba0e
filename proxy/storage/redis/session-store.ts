// SessionStore on Redis, for several proxy instances behind one load balancer: whichever instance takes
// a request or a notification sees the same sessions, idempotency keys and webhook ids.
import type { Redis } from 'ioredis';
import type { Store as RateLimitStore } from 'express-rate-limit';
import { decodeSession, encodeSession, stateForOutcome } from '../session-codec.ts';
import {
  closeConnection,
  createRedisConnection,
  DEFAULT_COMMAND_TIMEOUT_MS,
  readyOrClose,
  waitUntilReady,
} from './connection.ts';
import type { RedisConnectionOptions } from './connection-options.ts';
import { DEFAULT_REDIS_REPLICA_TIMEOUT_MS, RECORD_GRACE_MS } from '../../config/limits.ts';
import { redisCommand } from './errors.ts';
import { redisKeys, type RedisKeys } from './keys.ts';
import { literalPattern, scanKeys } from './forget-user.ts';
import { RedisGuard } from './guard.ts';
import { MoneyWrites } from './replicas.ts';
import { createRedisRateLimitStore } from './rate-limit.ts';
import { CREATE, MARK, MARK_RETURNED, RELEASE_IF_PENDING, RENEW_IF_PENDING, SETTLE, runScript } from './scripts.ts';
import {
  TERMINAL_STATES,
  type SessionRecord,
  type SessionStore,
  type SettleResult,
  type StoredOutcome,
} from '../sessions.ts';

export interface RedisSessionStoreOptions extends Omit<RedisConnectionOptions, 'role'> {
  /** Prefix of every key (default `obv:`). */
  prefix?: string;
  /**
   * How long a session's keys outlive its expiry (default 1 h): a browser that reloads late still reads
   * its outcome, and a late provider retry still finds the session to answer it properly.
   */
  graceMs?: number;
  /** Upper bound on how long a duplicate start waits for the first one to finish (default 30 s). */
  idempotencyWaitMs?: number;
  /**
   * A start's claim is a lease this long (default 3 s), renewed by its instance every third of it while
   * the start runs: a claim whose instance died is free again within the lease, so a retry gets a prompt
   * answer instead of waiting for a start that will never finish.
   */
  pendingClaimTtlMs?: number;
  /** Clock, epoch ms (tests). */
  now?: () => number;
  /**
   * Refuse a Redis that does not persist (`appendonly no`): payments, notifications and readiness answer
   * 503 (storage/redis/guard.ts). `createObvProxy` sets it in production; default false (a warning).
   */
  requirePersistence?: boolean;
  /**
   * Replicas that must have received each money write (a payment's claim and result, an outcome, an
   * event) before it is acknowledged (`WAIT`, storage/redis/replicas.ts); default 0: none.
   */
  minReplicas?: number;
  /** How long a money write waits for them before it answers 503; default 1 s. */
  replicaTimeoutMs?: number;
}

const DEFAULT_IDEMPOTENCY_WAIT_MS = 30_000;
const DEFAULT_PENDING_CLAIM_TTL_MS = 3_000;
const PENDING = 'pending';
const DONE_PREFIX = 'session:';

/**
 * Sessions as Redis hashes (`base` JSON + `state` + `outcome`), the notification reference and
 * idempotency/webhook markers as plain strings, all with TTLs. Owns one connection, which it also lends
 * to the rate-limit stores it makes.
 */
export class RedisSessionStore implements SessionStore {
  /**
   * The commands connection, lent to the other Redis repositories (storage/create-storage.ts).
   * @internal Left out of the published declarations, which must not need ioredis's types (an optional dependency).
   */
  readonly redis: Redis;
  readonly keys: RedisKeys;
  /**
   * Whether this Redis may take money now: it persists (in production) and still holds its generation mark.
   * @internal Left out of the published declarations, as `redis` (its type needs ioredis's).
   */
  readonly guard: RedisGuard;
  /**
   * The connection money writes go through and their wait for replicas (the commands connection when
   * none is asked for).
   * @internal As `redis`.
   */
  readonly money: MoneyWrites;
  readonly #graceMs: number;
  readonly #idempotencyWaitMs: number;
  readonly #pendingClaimTtlMs: number;
  readonly #now: () => number;
  /** Claims this instance holds while their start runs, renewed until completed or released. */
  readonly #renewals = new Map<string, NodeJS.Timeout>();

  constructor(options: RedisSessionStoreOptions) {
    this.redis = createRedisConnection({ ...options, role: 'commands' });
    this.keys = redisKeys(options.prefix);
    this.#graceMs = options.graceMs ?? RECORD_GRACE_MS;
    this.#idempotencyWaitMs = options.idempotencyWaitMs ?? DEFAULT_IDEMPOTENCY_WAIT_MS;
    this.#pendingClaimTtlMs = options.pendingClaimTtlMs ?? DEFAULT_PENDING_CLAIM_TTL_MS;
    this.#now = options.now ?? Date.now;
    const minReplicas = options.minReplicas ?? 0;
    const replicaTimeoutMs = options.replicaTimeoutMs ?? DEFAULT_REDIS_REPLICA_TIMEOUT_MS;
    // A connection blocked in WAIT serves nothing else until it returns: money writes get their own.
    const moneyConnection =
      minReplicas > 0
        ? createRedisConnection({
            ...options,
            role: 'money',
            // A write may queue behind another one's WAIT before its own.
            commandTimeoutMs: (options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS) + replicaTimeoutMs,
          })
        : this.redis;
    this.money = new MoneyWrites(moneyConnection, {
      minReplicas,
      timeoutMs: replicaTimeoutMs,
      fenceKey: this.keys.replicaFence,
    });
    this.guard = new RedisGuard(this.redis, {
      key: this.keys.generation,
      requirePersistence: options.requirePersistence ?? false,
      minReplicas,
      logger: options.logger,
    });
  }

  /** Resolves once connected; rejects after `timeoutMs` (the connection keeps retrying). */
  async ready(timeoutMs = 10_000): Promise<void> {
    await Promise.all([waitUntilReady(this.redis, timeoutMs), waitUntilReady(this.money.redis, timeoutMs)]);
  }

  /**
   * @throws Error when the session id already exists; SessionBackendUnavailableError when Redis is
   *   unreachable or the replicas asked for did not confirm it.
   */
  async create(record: SessionRecord): Promise<void> {
    const fields = encodeSession(record);
    const ttlMs = Math.max(1, record.expiresAt - this.#now()) + this.#graceMs;
    await runScript(
      this.money.redis,
      CREATE,
      [this.keys.session(record.sessionId), this.keys.notificationRef(record.notificationRef)],
      [fields.base, fields.state, String(record.expiresAt), String(ttlMs), fields.outcome ?? '', record.sessionId],
    );
    // A start answered 201 whose session a failover loses could never take its outcome: waited for too.
    await this.money.replicated();
  }

  async get(sessionId: string): Promise<SessionRecord | undefined> {
    const [base, state, outcome] = await redisCommand(
      this.redis.hmget(this.keys.session(sessionId), 'base', 'state', 'outcome'),
    );
    if (!base || !state) return undefined;
    // An outcome is shown (its linkRef handed to the page) only once the replicas have it: one whose
    // settle is still waiting, or timed out, could be gone after a failover (OBV_REDIS_MIN_REPLICAS).
    if (outcome) await this.money.fence();
    return this.#withExpiry(decodeSession(base, state, outcome));
  }

  async forgetUser(merchantUserId: string): Promise<SessionRecord[]> {
    const forgotten: SessionRecord[] = [];
    for (const key of await scanKeys(this.redis, literalPattern(this.keys.session('')) + '*')) {
      const [base, state, outcome] = await redisCommand(this.redis.hmget(key, 'base', 'state', 'outcome'));
      if (!base || !state) continue;
      const record = decodeSession(base, state, outcome);
      if (record.merchantUserId !== merchantUserId) continue;
      await redisCommand(this.redis.del(key, this.keys.notificationRef(record.notificationRef)));
      forgotten.push(record);
    }
    return forgotten;
  }

  async getByNotificationRef(ref: string): Promise<SessionRecord | undefined> {
    const sessionId = await redisCommand(this.redis.get(this.keys.notificationRef(ref)));
    return sessionId ? this.get(sessionId) : undefined;
  }

  /**
   * Stores the first terminal outcome of a session, atomically across instances. Resolves only after
   * Redis acknowledged the write (durable to the extent Redis's `appendonly`/`appendfsync` make it);
   * rejects with SessionBackendUnavailableError while Redis is unreachable, so the notification is
   * answered 503 and retried by the provider.
   * @throws Error for an unknown session (never created, or its keys expired).
   */
  async settle(sessionId: string, outcome: StoredOutcome): Promise<SettleResult> {
    await this.guard.assertSafe();
    const reply = await runScript(
      this.money.redis,
      SETTLE,
      [this.keys.session(sessionId)],
      [JSON.stringify(outcome), stateForOutcome(outcome), String(this.#now())],
    );
    const result = parseScriptReply(reply);
    if (!result) throw new Error(`unknown session ${sessionId}`);
    // The provider is answered 2xx only for an outcome the replicas have (OBV_REDIS_MIN_REPLICAS), also
    // when its retry finds the outcome an earlier attempt stored and then failed to see replicated.
    if (result.changed) await this.money.replicated();
    else await this.money.fence();
    return { stored: result.changed, record: this.#withExpiry(result.record) };
  }

  async markReturned(sessionId: string): Promise<SessionRecord | undefined> {
    const reply = await runScript(this.redis, MARK_RETURNED, [this.keys.session(sessionId)], [String(this.#now())]);
    const result = parseScriptReply(reply);
    return result && this.#withExpiry(result.record);
  }

  /**
   * Claims `key` with a `pending` marker (SET NX). A duplicate polls until the first start completes
   * (→ its sessionId) or is released (→ no sessionId), for at most `idempotencyWaitMs` (then also no
   * sessionId: the caller answers that the first request is still in progress). The pending marker
   * expires after `pendingClaimTtlMs`, so a start whose instance died mid-way frees its key.
   */
  async claimIdempotencyKey(
    key: string,
    ttlMs: number,
  ): Promise<{ claimed: true } | { claimed: false; sessionId?: string }> {
    const redisKey = this.keys.idempotency(key);
    const pendingTtl = Math.min(ttlMs, this.#pendingClaimTtlMs);
    if ((await redisCommand(this.redis.set(redisKey, PENDING, 'PX', pendingTtl, 'NX'))) === 'OK') {
      this.#renew(redisKey, pendingTtl);
      return { claimed: true };
    }
    const deadline = this.#now() + this.#idempotencyWaitMs;
    for (let delay = 25; ; delay = Math.min(delay * 2, 250)) {
      const value = await redisCommand(this.redis.get(redisKey));
      if (value?.startsWith(DONE_PREFIX)) return { claimed: false, sessionId: value.slice(DONE_PREFIX.length) };
      if (value !== PENDING || this.#now() >= deadline) return { claimed: false };
      await sleep(delay);
    }
  }

  async completeIdempotencyKey(key: string, sessionId: string, ttlMs: number): Promise<void> {
    this.#stopRenewing(this.keys.idempotency(key));
    await redisCommand(this.redis.set(this.keys.idempotency(key), DONE_PREFIX + sessionId, 'PX', ttlMs));
  }

  async releaseIdempotencyKey(key: string): Promise<void> {
    // Only a pending claim is released: a completed key keeps answering duplicates until its TTL.
    this.#stopRenewing(this.keys.idempotency(key));
    await runScript(this.redis, RELEASE_IF_PENDING, [this.keys.idempotency(key)], [PENDING]);
  }

  async mark(key: string, value: string, ttlMs: number): Promise<string> {
    // Markers are the webhook ids and the readiness probe's write: /readyz is 503 while the guard is closed.
    await this.guard.assertSafe();
    return String(
      await runScript(this.redis, MARK, [this.keys.mark(key)], [value, String(Math.max(1, Math.ceil(ttlMs)))]),
    );
  }

  async readMark(key: string): Promise<string | undefined> {
    return (await redisCommand(this.redis.get(this.keys.mark(key)))) ?? undefined;
  }

  async unmark(key: string): Promise<void> {
    await redisCommand(this.redis.del(this.keys.mark(key)));
  }

  /**
   * An express-rate-limit store keeping one limiter's counters in Redis, so a client's budget is shared
   * by every instance. Give each limiter its own `limiterName` (express-rate-limit refuses shared stores).
   */
  rateLimitStore(limiterName: string): RateLimitStore {
    return createRedisRateLimitStore(this.redis, this.keys.rateLimit(limiterName));
  }

  async close(): Promise<void> {
    for (const key of [...this.#renewals.keys()]) this.#stopRenewing(key);
    this.guard.close();
    await Promise.all([
      closeConnection(this.redis),
      this.money.redis === this.redis ? undefined : closeConnection(this.money.redis),
    ]);
  }

  /** Keeps this instance's pending claim alive while its start runs (a lease: see pendingClaimTtlMs). */
  #renew(redisKey: string, ttlMs: number): void {
    const timer = setInterval(
      () => {
        runScript(this.redis, RENEW_IF_PENDING, [redisKey], [PENDING, String(ttlMs)]).catch(() => undefined);
      },
      Math.max(1, Math.floor(ttlMs / 3)),
    );
    timer.unref();
    this.#renewals.set(redisKey, timer);
  }

  #stopRenewing(redisKey: string): void {
    clearInterval(this.#renewals.get(redisKey));
    this.#renewals.delete(redisKey);
  }

  #withExpiry(record: SessionRecord): SessionRecord {
    if (!TERMINAL_STATES.has(record.state) && this.#now() >= record.expiresAt) return { ...record, state: 'expired' };
    return record;
  }
}

/** Opens a {@link RedisSessionStore} and waits until it is connected. */
export function openRedisSessionStore(
  options: RedisSessionStoreOptions,
  readyTimeoutMs?: number,
): Promise<RedisSessionStore> {
  return readyOrClose(new RedisSessionStore(options), readyTimeoutMs);
}

function parseScriptReply(reply: unknown): { changed: boolean; record: SessionRecord } | undefined {
  if (!Array.isArray(reply)) return undefined;
  const [changed, base, state, outcome] = reply as [number, string, string, string | null];
  return { changed: changed === 1, record: decodeSession(base, state, outcome) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
