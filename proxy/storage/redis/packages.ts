// ioredis and rate-limit-redis are optional dependencies: they load on first use, which only the Redis
// backend (OBV_REDIS_URL) makes, so a single in-memory instance runs without them installed. Both are
// CommonJS packages, so a synchronous require keeps `createObvProxy` synchronous.
import { createRequire } from 'node:module';
import type * as Ioredis from 'ioredis';
import type * as RateLimitRedis from 'rate-limit-redis';

const requireOptional = createRequire(import.meta.url);

function load<T>(name: string): T {
  try {
    return requireOptional(name) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(`OBV_REDIS_URL is set but the optional dependency ${name} is not installed (npm install ${name})`, {
      cause: error,
    });
  }
}

export const loadIoredis = (): typeof Ioredis => load('ioredis');
export const loadRateLimitRedis = (): typeof RateLimitRedis => load('rate-limit-redis');
