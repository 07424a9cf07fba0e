// Payments on Redis, shared by every instance: one JSON string per order (with the retention as its TTL),
// a list of the order's earlier payments (reconciled `not-charged`, then replaced), and a sorted set of the
// pending ones by lease end. Each read-modify-write is one Lua script, atomic across instances, so two
// instances never both claim an order, and a lease that ends is turned `unknown` (and told) by exactly
// one of them.
import type { Redis } from 'ioredis';
import { redisCommand } from './errors.ts';
import type { RedisKeys } from './keys.ts';
import type { RedisGuard } from './guard.ts';
import type { MoneyWrites } from './replicas.ts';
import { SessionBackendUnavailableError } from '../errors.ts';
import { runScript, script } from './scripts.ts';
import { rewriteItem, rewriteString, scanKeys, literalPattern } from './forget-user.ts';
import { forgottenPayment } from '../forgotten.ts';
import { PaymentRecord, reconciled, type ClaimResult, type PaymentStore, type Reconciliation } from '../payments.ts';

/**
 * KEYS[1] order, KEYS[2] leases, KEYS[3] the Idempotency-Key's index (or the order key again when there
 * is none), KEYS[4] the order's earlier payments, KEYS[5] the generation mark; ARGV[1] record JSON,
 * ARGV[2] TTL ms, ARGV[3] lease end, ARGV[4] order id, ARGV[5] '1' when there is a key, ARGV[6] the
 * generation mark the instance adopted. Returns {'generation'} when the mark is not that one (Redis lost
 * its data: an order it forgot is never claimed again), the order's record (unless it is `not-charged`:
 * that one is kept among the earlier payments and replaced), {'key', other order} for a key used
 * elsewhere, or false.
 */
const CLAIM = script(`
if redis.call('GET', KEYS[5]) ~= ARGV[6] then return {'generation'} end
local held = redis.call('GET', KEYS[1])
if held and cjson.decode(held).state ~= 'not-charged' then return held end
if ARGV[5] == '1' then
  local keyed = redis.call('GET', KEYS[3])
  if keyed and keyed ~= ARGV[4] then return {'key', keyed} end
  redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[2])
end
if held then
  redis.call('RPUSH', KEYS[4], held)
  redis.call('PEXPIRE', KEYS[4], ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
return false
`);

/**
 * KEYS[1] order, KEYS[2] leases; ARGV[1] payment id, ARGV[2] new record JSON or '' (release), ARGV[3] TTL
 * ms, ARGV[4] order id. Acts only while `paymentId` holds the order and its result is neither `completed`
 * nor `not-charged` (storage/payments.ts `heldBy`).
 */
const FINISH = script(`
local held = redis.call('GET', KEYS[1])
if not held then return 0 end
local record = cjson.decode(held)
if record.paymentId ~= ARGV[1] or record.state == 'completed' or record.state == 'not-charged' then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
redis.call('ZREM', KEYS[2], ARGV[4])
return 1
`);

/**
 * KEYS[1] leases; ARGV[1] now, ARGV[2] max, ARGV[3] the order keys' prefix. Turns pending payments whose
 * lease ended into `unknown` (the record's state and lease only) and returns their new JSON.
 */
const EXPIRE = script(`
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])) do
  redis.call('ZREM', KEYS[1], id)
  local key = ARGV[3] .. id
  local held = redis.call('GET', key)
  if held then
    local record = cjson.decode(held)
    if record.state == 'pending' then
      record.state = 'unknown'
      record.leaseExpiresAt = nil
      local json = cjson.encode(record)
      redis.call('SET', key, json, 'KEEPTTL')
      table.insert(out, json)
    end
  end
end
return out
`);

/**
 * KEYS[1] order; ARGV[1] the record as read, ARGV[2] the record reconciled, ARGV[3] TTL ms. Writes the
 * reconciliation only if the order's record is still exactly what was read (a compare-and-set: the
 * record is built in Node, by the rule every backend shares).
 */
const REPLACE = script(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`);

/** Compare-and-set attempts of one reconciliation before it answers that the payment changed meanwhile. */
const RECONCILE_ATTEMPTS = 3;

export class RedisPaymentStore implements PaymentStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly guard: RedisGuard,
    /** Every write of a payment goes through it and waits for the replicas it asks for (replicas.ts). */
    private readonly money: MoneyWrites,
  ) {}

  /**
   * A claim is acknowledged (and endpoint 4 called) only once the replicas asked for have it: a claim a
   * failover loses lets the order be paid again. One that cannot be confirmed is released (nothing was
   * sent to the provider), so the order stays payable.
   * @throws DurabilityError when Redis lost its data or does not persist in production (storage/redis/guard.ts);
   *   SessionBackendUnavailableError when Redis is unreachable or the replicas did not confirm the claim.
   */
  async claim(pending: PaymentRecord, retentionMs: number): Promise<ClaimResult> {
    await this.guard.assertSafe();
    try {
      const result = await this.#claim(pending, retentionMs);
      if (result.claimed) await this.money.replicated();
      else if ('existing' in result) await this.money.fence();
      return result;
    } catch (error) {
      if (error instanceof SessionBackendUnavailableError) {
        // The claim may have been written (a reply lost, a replica missing): undo it while it is this
        // payment's. Best effort: a claim left behind ends as `unknown` at its lease, never paid twice.
        await this.#finish(pending.merchantTransactionId, pending.paymentId, '', 1).catch(() => undefined);
      }
      throw error;
    }
  }

  async #claim(pending: PaymentRecord, retentionMs: number): Promise<ClaimResult> {
    const generation = this.guard.generation!;
    const id = pending.merchantTransactionId;
    const key = pending.idempotencyKey;
    const held = await runScript(
      this.money.redis,
      CLAIM,
      [
        this.keys.payment(id),
        this.keys.paymentLeases,
        key === undefined ? this.keys.payment(id) : this.keys.paymentKey(key),
        this.keys.earlierPayments(id),
        generation.key,
      ],
      [
        JSON.stringify(pending),
        String(Math.ceil(retentionMs)),
        String(pending.leaseExpiresAt ?? 0),
        id,
        key === undefined ? '0' : '1',
        generation.value,
      ],
    );
    if (Array.isArray(held) && held[0] === 'generation') throw this.guard.lost();
    if (Array.isArray(held)) return { claimed: false, keyUsedFor: String(held[1]) };
    return typeof held === 'string' ? { claimed: false, existing: parse(held) } : { claimed: true };
  }

  /** With OBV_REDIS_MIN_REPLICAS, a record found is returned only once the replicas have it (replicas.ts `fence`). */
  async get(merchantTransactionId: string): Promise<PaymentRecord | undefined> {
    const held = await redisCommand(this.redis.get(this.keys.payment(merchantTransactionId)));
    if (held === null) return undefined;
    await this.money.fence();
    return parse(held);
  }

  async earlier(merchantTransactionId: string): Promise<PaymentRecord[]> {
    return (await redisCommand(this.redis.lrange(this.keys.earlierPayments(merchantTransactionId), 0, -1))).map(parse);
  }

  /** @throws SessionBackendUnavailableError when the replicas asked for did not confirm the result (not done). */
  async finish(record: PaymentRecord, retentionMs: number): Promise<boolean> {
    return this.#replicated(
      await this.#finish(record.merchantTransactionId, record.paymentId, JSON.stringify(record), retentionMs),
    );
  }

  async release(merchantTransactionId: string, paymentId: string): Promise<boolean> {
    return this.#replicated(await this.#finish(merchantTransactionId, paymentId, '', 1));
  }

  /** FINISH: `json` '' releases the order. */
  async #finish(id: string, paymentId: string, json: string, retentionMs: number): Promise<boolean> {
    return (
      (await runScript(
        this.money.redis,
        FINISH,
        [this.keys.payment(id), this.keys.paymentLeases],
        [paymentId, json, String(Math.ceil(retentionMs)), id],
      )) === 1
    );
  }

  /** `changed`, once the replicas asked for have the write that changed it. */
  async #replicated(changed: boolean): Promise<boolean> {
    if (changed) await this.money.replicated();
    return changed;
  }

  async reconcile(
    merchantTransactionId: string,
    paymentId: string,
    reconciliation: Reconciliation,
    retentionMs: number,
  ): Promise<PaymentRecord | undefined> {
    const key = this.keys.payment(merchantTransactionId);
    for (let attempt = 0; attempt < RECONCILE_ATTEMPTS; attempt++) {
      const held = await redisCommand(this.redis.get(key));
      const record = reconciled(held === null ? undefined : parse(held), paymentId, reconciliation);
      if (!record) return undefined;
      if (
        (await runScript(
          this.money.redis,
          REPLACE,
          [key],
          [held!, JSON.stringify(record), String(Math.ceil(retentionMs))],
        )) === 1
      ) {
        await this.money.replicated();
        return record;
      }
    }
    return undefined;
  }

  async expireLeases(nowMs: number, max: number): Promise<PaymentRecord[]> {
    const reply = await runScript(
      this.redis,
      EXPIRE,
      [this.keys.paymentLeases],
      [String(nowMs), String(max), this.keys.payment('')],
    );
    return (reply as string[]).map(parse);
  }

  /** The connection is the session store's: it closes it. */
  async forgetUser(merchantUserId: string): Promise<number> {
    const change = (value: string) => {
      const record = PaymentRecord.parse(JSON.parse(value));
      return record.merchantUserId === merchantUserId ? JSON.stringify(forgottenPayment(record)) : undefined;
    };
    let rewritten = 0;
    for (const key of await scanKeys(this.redis, literalPattern(this.keys.payment('')) + '*'))
      if (await rewriteString(this.redis, key, change)) rewritten++;
    for (const key of await scanKeys(this.redis, literalPattern(this.keys.earlierPayments('')) + '*')) {
      const length = await redisCommand(this.redis.llen(key));
      for (let index = 0; index < length; index++) if (await rewriteItem(this.redis, key, index, change)) rewritten++;
    }
    return rewritten;
  }

  async close(): Promise<void> {}
}

/**
 * Lua's cjson writes an empty table as `{}` and drops nil fields, and another instance wrote the rest:
 * parsed, never trusted. An empty `providerResponse` comes back as `{}` either way.
 */
function parse(json: string): PaymentRecord {
  return PaymentRecord.parse(JSON.parse(json));
}
