// The one place that decides where sessions live. The in-memory backend serves a single instance;
// the Redis branch (OBV_REDIS_URL) lets several instances share sessions and results.
import type { Logger } from 'pino';
import type { Store } from 'express-rate-limit';
import type { ResultBus, SessionStore } from './types.ts';
import { MemorySessionStore } from './memory/store.ts';
import { MemoryResultBus } from './memory/bus.ts';
import { createRedisBackend } from './redis/backend.ts';
import type { EventOutbox } from '../events/outbox.ts';
import { MemoryEventOutbox } from '../events/memory-outbox.ts';
import { RedisEventOutbox } from '../events/redis-outbox.ts';

export interface SessionBackend {
  sessionStore: SessionStore;
  resultBus: ResultBus;
  /** A store for express-rate-limit, shared across instances; undefined = its in-memory default. */
  rateLimitStore?: Store;
  /** The merchant events' outbox, beside the sessions (in Redis: on the store's connection). */
  eventOutbox: EventOutbox;
  /** The failed API-key counts (merchant-auth.ts), shared across instances; undefined = in memory. */
  authFailureStore?: Store;
  /** Closes what this function created. */
  close(): Promise<void>;
}

export interface SessionBackendOptions {
  redisUrl?: string;
  /** Prefix of every Redis key and channel; default `obv:`. */
  redisPrefix?: string;
  logger: Logger;
}

/**
 * Builds the session store and result bus for the configuration. Synchronous so `createObvProxy` can
 * be: a backend that must connect does so in the background (Redis: commands wait for the first connect).
 */
export function createSessionBackend(options: SessionBackendOptions): SessionBackend {
  if (options.redisUrl) {
    // Commands issued before the first connect wait for it; after that, while Redis is down, they fail
    // at once (SessionBackendUnavailableError → 503) instead of queueing. See redis/connection.ts.
    const redis = createRedisBackend({
      url: options.redisUrl,
      prefix: options.redisPrefix,
      logger: options.logger.child({ component: 'redis' }),
    });
    return {
      sessionStore: redis.sessionStore,
      resultBus: redis.resultBus,
      rateLimitStore: redis.rateLimitStore('verifications'),
      eventOutbox: new RedisEventOutbox(redis.sessionStore.redis, redis.sessionStore.keys),
      authFailureStore: redis.rateLimitStore('auth-failures'),
      close: () => redis.close(),
    };
  }
  const sessionStore = new MemorySessionStore();
  const resultBus = new MemoryResultBus();
  const eventOutbox = new MemoryEventOutbox();
  return {
    sessionStore,
    resultBus,
    eventOutbox,
    async close() {
      await Promise.all([sessionStore.close(), resultBus.close(), eventOutbox.close()]);
    },
  };
}
