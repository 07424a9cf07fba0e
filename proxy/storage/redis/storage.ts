// Every repository on Redis, for several proxy instances: the session store owns the commands connection
// and lends it to the outbox, payments, link sessions, removals and the rate-limit counters; the result bus
// has its own two (publish, subscribe) and catches up from the session store after a reconnect.
import { RedisResultBus } from './bus.ts';
import { readyOrClose } from './connection.ts';
import type { RedisLogger } from './connection-options.ts';
import { RedisSessionStore, type RedisSessionStoreOptions } from './session-store.ts';
import { RedisEventOutbox } from './outbox.ts';
import { RedisPaymentStore } from './payments.ts';
import { RedisLinkSessionStore } from './link-sessions.ts';
import { RedisRemovalStore } from './removals.ts';
import type { Storage } from '../storage.ts';
import type { OutboxCodec } from '../outbox.ts';

export interface RedisStorageOptions extends RedisSessionStoreOptions {
  logger?: RedisLogger | undefined;
  /** How the outbox keeps events at rest (storage/outbox.ts); default: in the clear. */
  outboxCodec?: OutboxCodec | undefined;
}

/** The Redis storage, with its connections' own handles (tests reach into them). */
export interface RedisStorage extends Storage {
  readonly kind: 'redis';
  sessionStore: RedisSessionStore;
  resultBus: RedisResultBus;
  /** Resolves once all three connections are up and the events subscription is live. */
  ready(timeoutMs?: number): Promise<void>;
}

/**
 * Builds every repository at once; the three connections (commands, publish, subscribe) connect in the
 * background. Commands issued before the first connect wait for it (bounded by the command timeout), so
 * a synchronous caller can use it straight away; `ready()` tells when it is fully live. After that, while
 * Redis is down, commands fail at once (SessionBackendUnavailableError → 503) instead of queueing
 * (connection.ts).
 * @throws TypeError for a URL that is not redis:// or rediss://.
 */
export function createRedisStorage(options: RedisStorageOptions): RedisStorage {
  const sessionStore = new RedisSessionStore(options);
  // Catches up from the store until the relay hands the bus its own reader (RedisResultBus.readThrough).
  const resultBus = new RedisResultBus({ ...options, sessions: sessionStore });
  const { redis, keys } = sessionStore;
  return {
    kind: 'redis',
    sessionStore,
    resultBus,
    eventOutbox: new RedisEventOutbox(redis, keys, {
      codec: options.outboxCodec,
      money: sessionStore.money,
      onSealFailed: (error) =>
        options.logger?.warn(
          { err: error },
          'outbox: sealing the events stored in the clear failed; tried again later',
        ),
    }),
    payments: new RedisPaymentStore(redis, keys, sessionStore.guard, sessionStore.money),
    linkSessions: new RedisLinkSessionStore(redis, keys),
    removals: new RedisRemovalStore(redis, keys),
    rateLimitStore: sessionStore.rateLimitStore('verifications'),
    authFailureStore: sessionStore.rateLimitStore('auth-failures'),
    redeliveryStore: sessionStore.rateLimitStore('redeliveries'),
    sealsEvents: options.outboxCodec?.seals ?? false,
    location: options.sentinels?.length
      ? `redis sentinel ${options.sentinelName ?? ''} via ${options.sentinels.map(({ host, port }) => `${host}:${port}`).join(',')}`
      : redactedRedisUrl(options.url),
    ready: async (timeoutMs) => {
      await Promise.all([sessionStore.ready(timeoutMs), resultBus.ready(timeoutMs)]);
    },
    close: async () => {
      await Promise.all([resultBus.close(), sessionStore.close()]);
    },
  };
}

/**
 * {@link createRedisStorage}, resolved once Redis is reachable and the subscription live.
 * @throws Error when Redis is not reachable within `readyTimeoutMs` (default 10 s); nothing is left open.
 */
export function openRedisStorage(options: RedisStorageOptions, readyTimeoutMs?: number): Promise<RedisStorage> {
  return readyOrClose(createRedisStorage(options), readyTimeoutMs);
}

/** The Redis URL without its password, for a log line. */
function redactedRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'redis';
  }
}
