// express-rate-limit counters in Redis, so a client's budget is shared by every proxy instance.
import type { Redis } from 'ioredis';
import type { Store } from 'express-rate-limit';
import type { RedisReply } from 'rate-limit-redis';
import { redisCommand } from './errors.ts';
import { loadRateLimitRedis } from './packages.ts';

/**
 * A rate-limit store over an existing connection, its keys under `prefix`.
 *
 * rate-limit-redis loads its Lua scripts from its constructor and keeps the promises; when Redis is
 * unreachable at that moment nobody awaits them until the first request, and Node would end the process
 * on the unhandled rejection. Marking them handled keeps the rejection for the store's own reload-on-
 * failure path (it reloads the script when a call fails) without the crash.
 */
export function createRedisRateLimitStore(redis: Redis, prefix: string): Store {
  const store = new (loadRateLimitRedis().RedisStore)({
    prefix,
    // Through redisCommand so an outage refuses a start with the same 503 as the session store does.
    sendCommand: (command: string, ...args: string[]) =>
      redisCommand(redis.call(command, ...args) as Promise<RedisReply>),
  });
  store.incrementScriptSha.catch(() => undefined);
  store.getScriptSha.catch(() => undefined);
  return store;
}
