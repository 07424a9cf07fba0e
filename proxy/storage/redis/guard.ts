// What makes a Redis safe to take money on, checked rather than assumed:
// - It persists: `appendonly yes` (CONFIG GET, or INFO persistence where a managed Redis forbids CONFIG).
//   A Redis that does not is refused in production (the guard stays closed), warned of in sandbox mode;
//   one that says neither is warned of loudly, the generation mark below being then the only guard.
// - It still holds what it held: a generation mark (a random id under `{prefix}generation`) written by
//   the first proxy on an empty Redis and adopted by every later one. A Redis restarted empty, flushed or
//   failed over to a replica that never had the data has no mark, or another one: the instance stops
//   taking money and notifications (DurabilityError: 503, /readyz 503 `failed`), logs it once, and the
//   payment claim checks the mark inside its own script, so no order is claimed on a Redis that lost it.
//   It serves again by itself when the same mark is back (a restore of a backup that holds it); anything
//   else needs the operator: reconcile what the loss took, then restart the instances (a restart adopts
//   the mark it finds, or writes a new one on an empty Redis).
// Readiness proving a write (a replica answers READONLY) needs nothing here: every probe is a write.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { DurabilityError, SessionBackendUnavailableError } from '../errors.ts';
import type { RedisLogger } from './connection-options.ts';
import { isRedisUnavailable } from './errors.ts';
import { connectedReplicas } from './replicas.ts';

/** How often a live instance checks that its Redis still holds the mark (besides at every reconnect). */
const GENERATION_CHECK_INTERVAL_MS = 1_000;

export interface RedisGuardOptions {
  /** The key of the generation mark. */
  key: string;
  /** Production: a Redis without persistence is refused (else warned of). */
  requirePersistence: boolean;
  /** OBV_REDIS_MIN_REPLICAS, compared once with the replicas connected (a warning either way it is wrong). */
  minReplicas?: number;
  logger?: RedisLogger | undefined;
}

/** Whether Redis persists its writes, and how that was learnt. */
export type Persistence =
  { persists: boolean; appendfsync?: string; source: 'CONFIG' | 'INFO' } | { persists: undefined; source: 'unknown' };

/**
 * `appendonly` from CONFIG GET, else `aof_enabled` from INFO persistence (a managed Redis often renames
 * or forbids CONFIG), else unknown.
 */
export async function readPersistence(redis: Redis): Promise<Persistence> {
  try {
    const reply = (await redis.call('CONFIG', 'GET', 'append*')) as string[];
    const settings = new Map<string, string>();
    for (let i = 0; i + 1 < reply.length; i += 2) settings.set(reply[i]!, reply[i + 1]!);
    if (settings.has('appendonly')) {
      return {
        persists: settings.get('appendonly') === 'yes',
        appendfsync: settings.get('appendfsync'),
        source: 'CONFIG',
      };
    }
  } catch (error) {
    if (isRedisUnavailable(error)) throw error;
    // Forbidden, renamed or unknown: ask INFO.
  }
  try {
    const info = await redis.info('persistence');
    const aof = /^aof_enabled:(\d)/m.exec(info)?.[1];
    if (aof !== undefined) return { persists: aof === '1', source: 'INFO' };
  } catch (error) {
    if (isRedisUnavailable(error)) throw error;
  }
  return { persists: undefined, source: 'unknown' };
}

export class RedisGuard {
  /** The mark this instance adopted; undefined until the first check. */
  #generation: string | undefined;
  /** Why money is refused now, or undefined. */
  #closed: string | undefined;
  #checking: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisGuardOptions,
  ) {
    redis.on('ready', () => void this.check());
    if (redis.status === 'ready') void this.check();
    this.#timer = setInterval(() => void this.check(), GENERATION_CHECK_INTERVAL_MS);
    this.#timer.unref();
  }

  /** The mark's key and the value a claim must find there (inside its script), once adopted. */
  get generation(): { key: string; value: string } | undefined {
    return this.#generation === undefined ? undefined : { key: this.options.key, value: this.#generation };
  }

  /**
   * Throws DurabilityError while money is refused (a Redis without persistence in production, or one
   * that lost its mark); waits for the first check after a start or a reconnect.
   */
  async assertSafe(): Promise<void> {
    if (this.#generation === undefined || this.#checking) await this.check();
    if (this.#closed !== undefined) throw new DurabilityError(this.#closed);
    // Not reached yet (down since the start): an outage like any other, not a loss.
    if (this.#generation === undefined)
      throw new SessionBackendUnavailableError('Redis is unavailable: its generation mark could not be read yet');
  }

  /** Tells the guard that a claim's script found the mark gone (it refused the claim). */
  lost(): DurabilityError {
    void this.check();
    return new DurabilityError(
      this.#closed ?? "Redis no longer holds this installation's generation mark: it lost its data",
    );
  }

  /** Checks persistence (once) and the mark; closes or reopens the guard, with one log line each way. */
  check(): Promise<void> {
    this.#checking ??= this.#check()
      .catch(() => undefined)
      .finally(() => (this.#checking = undefined));
    return this.#checking;
  }

  close(): void {
    clearInterval(this.#timer);
  }

  #persistenceChecked = false;

  async #check(): Promise<void> {
    if (!this.#persistenceChecked) {
      const persistence = await readPersistence(this.redis);
      this.#persistenceChecked = true;
      this.#judgePersistence(persistence);
      // Advice only: a Redis that does not answer INFO replication is not refused for it.
      await this.#judgeReplicas().catch(() => undefined);
    }
    if (this.#closed?.startsWith('Redis does not persist')) return;
    if (this.#generation === undefined) {
      const fresh = randomBytes(12).toString('base64url');
      await this.redis.set(this.options.key, fresh, 'NX');
      const found = await this.redis.get(this.options.key);
      if (found === null) return;
      this.#generation = found;
      if (found === fresh) {
        this.options.logger?.info(
          { key: this.options.key },
          'redis: no generation mark found, so this is taken for a new installation and one is written; if this Redis held obv-link data before, it lost it: reconcile the payments made since your last backup',
        );
      }
      return;
    }
    const found = await this.redis.get(this.options.key);
    if (found === this.#generation) {
      if (this.#closed !== undefined) {
        this.#closed = undefined;
        this.options.logger?.info(
          { key: this.options.key },
          'redis: the generation mark is back as it was (restored): taking payments and notifications again',
        );
      }
      return;
    }
    if (this.#closed === undefined) {
      this.#closed = `Redis no longer holds this installation's generation mark (${found === null ? 'gone' : 'another one'}): it restarted empty, was flushed or failed over to a server without the data`;
      this.#error(
        { key: this.options.key, found: found === null ? 'none' : 'another' },
        `${this.#closed}; payments, notifications and readiness answer 503 until the same mark is back (a restore) or the instances are restarted after you reconciled what was lost`,
      );
    }
  }

  #judgePersistence(persistence: Persistence): void {
    if (persistence.persists === true) return;
    if (persistence.persists === undefined) {
      this.#warn(
        {},
        'redis: neither CONFIG GET appendonly nor INFO persistence answered, so whether Redis persists is unknown: make sure it runs with appendonly yes (a Redis that restarts empty is stopped by the generation mark, after the fact)',
      );
      return;
    }
    const fix =
      'set appendonly yes (redis.conf, or CONFIG SET appendonly yes then CONFIG REWRITE; a managed Redis: its persistence / AOF setting)';
    if (this.options.requirePersistence) {
      this.#closed = `Redis does not persist (appendonly no, read by ${persistence.source}): a restart would forget every payment`;
      this.#error(
        { source: persistence.source },
        `${this.#closed}; refused in production: payments, notifications and readiness answer 503 until you ${fix} and restart`,
      );
    } else {
      this.options.logger?.info(
        { source: persistence.source },
        `redis: appendonly no: a restart forgets every session and payment (accepted in sandbox mode; production refuses it): ${fix}`,
      );
    }
  }

  /** Replicas connected but none waited for (production), or fewer connected than waited for: said once. */
  async #judgeReplicas(): Promise<void> {
    const wanted = this.options.minReplicas ?? 0;
    const connected = await connectedReplicas(this.redis);
    if (connected === undefined) return;
    if (wanted === 0 && connected > 0 && this.options.requirePersistence) {
      this.#warn(
        { connectedReplicas: connected },
        `redis: ${connected} replica(s) connected but OBV_REDIS_MIN_REPLICAS is 0: Redis replicates asynchronously, so a failover to a replica loses what it had not received yet, a payment's claim included (an order could be charged twice); set OBV_REDIS_MIN_REPLICAS=1 (docs/SEVERAL-INSTANCES.md)`,
      );
    } else if (connected < wanted) {
      this.#error(
        { connectedReplicas: connected, minReplicas: wanted },
        `redis: OBV_REDIS_MIN_REPLICAS is ${wanted} but ${connected} replica(s) are connected: payments, outcomes and events answer 503 until enough replicas receive them`,
      );
    }
  }

  #warn(obj: object, msg: string): void {
    this.options.logger?.warn(obj, msg);
  }

  #error(obj: object, msg: string): void {
    const logger = this.options.logger;
    if (logger?.error) logger.error(obj, msg);
    else logger?.warn(obj, msg);
  }
}
