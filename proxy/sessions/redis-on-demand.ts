// The Redis backend, loaded when it is first needed. `createSessionBackend` is synchronous (so that
// `createObvProxy` can be), yet a proxy without OBV_REDIS_URL must load nothing under sessions/redis/.
// So with a URL it hands out these stand-ins at once and imports ./redis/backend.ts in the background;
// a call made before the import finishes waits for it (as Redis commands wait for the first connect).
import type { Options as RateLimitOptions, Store as RateLimitStore } from 'express-rate-limit';
import type { RedisBackend, RedisBackendOptions } from './redis/backend.ts';
import type { ResultBus, SessionStore } from './types.ts';

export interface RedisOnDemand {
  sessionStore: SessionStore;
  resultBus: ResultBus;
  /** A rate-limit store for one limiter (each limiter needs its own name). */
  rateLimitStore(limiterName: string): RateLimitStore;
  close(): Promise<void>;
}

export function redisOnDemand(options: RedisBackendOptions): RedisOnDemand {
  let loaded: RedisBackend | undefined;
  const loading = import('./redis/backend.ts').then(({ createRedisBackend }) => {
    loaded = createRedisBackend(options);
    return loaded;
  });
  // A failed import rejects every call that needs the backend; it must not also end the process.
  loading.catch(() => undefined);
  const backend = async (): Promise<RedisBackend> => loaded ?? loading;

  const sessionStore: SessionStore = {
    create: async (record) => (await backend()).sessionStore.create(record),
    get: async (sessionId) => (await backend()).sessionStore.get(sessionId),
    sessionIdForNotificationRef: async (ref) => (await backend()).sessionStore.sessionIdForNotificationRef(ref),
    settle: async (sessionId, outcome) => (await backend()).sessionStore.settle(sessionId, outcome),
    markReturned: async (sessionId) => (await backend()).sessionStore.markReturned(sessionId),
    claimIdempotencyKey: async (key, ttlMs) => (await backend()).sessionStore.claimIdempotencyKey(key, ttlMs),
    completeIdempotencyKey: async (key, sessionId, ttlMs) => (await backend()).sessionStore.completeIdempotencyKey(key, sessionId, ttlMs),
    releaseIdempotencyKey: async (key) => (await backend()).sessionStore.releaseIdempotencyKey(key),
    mark: async (key, value, ttlMs) => (await backend()).sessionStore.mark(key, value, ttlMs),
    readMark: async (key) => (await backend()).sessionStore.readMark(key),
    unmark: async (key) => (await backend()).sessionStore.unmark(key),
    close: async () => (await backend()).sessionStore.close(),
  };

  const resultBus: ResultBus = {
    publish: async (event) => (await backend()).resultBus.publish(event),
    // Synchronous by contract: once loaded, straight through; before, the subscription is made when
    // the import finishes, ahead of any store read issued after this call (they wait for the same import).
    subscribe(sessionId, listener) {
      if (loaded) return loaded.resultBus.subscribe(sessionId, listener);
      let unsubscribe: (() => void) | undefined;
      let cancelled = false;
      void loading.then((redis) => {
        if (!cancelled) unsubscribe = redis.resultBus.subscribe(sessionId, listener);
      }, () => undefined);
      return () => {
        cancelled = true;
        unsubscribe?.();
      };
    },
    close: async () => (await backend()).resultBus.close(),
  };

  function rateLimitStore(limiterName: string): RateLimitStore {
    let limiterOptions: RateLimitOptions | undefined;
    let store: Promise<RateLimitStore> | undefined;
    const ready = (): Promise<RateLimitStore> => (store ??= backend().then(async (redis) => {
      const created = redis.rateLimitStore(limiterName);
      if (limiterOptions) await created.init?.(limiterOptions);
      return created;
    }));
    return {
      localKeys: false,
      // express-rate-limit calls init() when the limiter is built, before the import may have finished.
      init(options) {
        limiterOptions = options;
      },
      increment: async (key) => (await ready()).increment(key),
      decrement: async (key) => (await ready()).decrement(key),
      resetKey: async (key) => (await ready()).resetKey(key),
      get: async (key) => (await ready()).get?.(key),
    };
  }

  return {
    sessionStore,
    resultBus,
    rateLimitStore,
    async close() {
      // Nothing to close if the import failed; otherwise wait for it, so no connection is left open.
      const redis = await loading.catch(() => undefined);
      await redis?.close();
    },
  };
}
