// The Redis backend as one unit: the session store, the result bus wired to catch up from that store,
// and a rate-limit store sharing the store's connection. `create-backend.ts` picks it when OBV_REDIS_URL is set.
import type { Store as RateLimitStore } from 'express-rate-limit';
import { RedisResultBus } from './bus.ts';
import { readyOrClose, type RedisLogger } from './connection.ts';
import { RedisSessionStore, type RedisSessionStoreOptions } from './session-store.ts';
import { browserOutcome } from '../result-bus.ts';

export interface RedisBackendOptions extends RedisSessionStoreOptions {
  logger?: RedisLogger;
}

export interface RedisBackend {
  sessionStore: RedisSessionStore;
  resultBus: RedisResultBus;
  /** A rate-limit store for one limiter (each limiter needs its own name). */
  rateLimitStore(limiterName: string): RateLimitStore;
  /** Resolves once all three connections are up and the events subscription is live. */
  ready(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Builds the backend at once; its three connections (commands, publish, subscribe) connect in the
 * background. Commands issued before the first connect wait for it (bounded by the command timeout),
 * so a synchronous caller can use it straight away; `ready()` tells when it is fully live.
 * @throws TypeError for a URL that is not redis:// or rediss://.
 */
export function createRedisBackend(options: RedisBackendOptions): RedisBackend {
  const sessionStore = new RedisSessionStore(options);
  const resultBus = new RedisResultBus({
    ...options,
    catchUp: async (sessionId) => {
      const record = await sessionStore.get(sessionId);
      return record?.outcome && { type: 'result', sessionId, outcome: browserOutcome(record.outcome, record.language) };
    },
  });
  return {
    sessionStore,
    resultBus,
    rateLimitStore: (limiterName) => sessionStore.rateLimitStore(limiterName),
    ready: async (timeoutMs) => {
      await Promise.all([sessionStore.ready(timeoutMs), resultBus.ready(timeoutMs)]);
    },
    close: async () => {
      await Promise.all([resultBus.close(), sessionStore.close()]);
    },
  };
}

/**
 * {@link createRedisBackend}, resolved once Redis is reachable and the subscription live.
 * @throws Error when Redis is not reachable within `readyTimeoutMs` (default 10 s); nothing is left open.
 */
export function openRedisBackend(options: RedisBackendOptions, readyTimeoutMs?: number): Promise<RedisBackend> {
  return readyOrClose(createRedisBackend(options), readyTimeoutMs);
}
