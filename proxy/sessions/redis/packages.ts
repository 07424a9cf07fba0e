// The Redis backend's optional dependencies, typed (sessions/optional-packages.ts loads them).
import type * as Ioredis from 'ioredis';
import type * as RateLimitRedis from 'rate-limit-redis';
import { loadOptionalPackage } from '../optional-packages.ts';

export const loadIoredis = (): typeof Ioredis => loadOptionalPackage('ioredis');
export const loadRateLimitRedis = (): typeof RateLimitRedis => loadOptionalPackage('rate-limit-redis');
