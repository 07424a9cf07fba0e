// ioredis connections configured to FAIL FAST. The notification route must answer 5xx while Redis is
// unreachable, so the provider retries later; ioredis's defaults would instead queue commands in memory
// and resolve them whenever Redis comes back (or after 20 reconnect attempts), which would keep the
// provider waiting and hide the outage. The connections still reconnect on their own, forever.
//
// One exception: before the FIRST connect, commands wait (up to the command timeout, or until that first
// attempt fails). That lets the backend be built synchronously and serve the first request of a process
// that started a moment ago, without ever queueing across an outage.
import type { Redis, RedisOptions } from 'ioredis';
import type { RedisConnectionOptions, RedisLogger } from './connection-options.ts';
import { loadIoredis } from './packages.ts';

export const DEFAULT_COMMAND_TIMEOUT_MS = 2_000;
const DEFAULT_MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * Checks that `url` is a Redis URL, so a typo in `OBV_REDIS_URL` fails at start-up with a clear message
 * instead of ioredis silently connecting to localhost.
 * @throws TypeError naming the problem (the URL itself is not echoed: it may hold a password).
 */
export function assertRedisUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError('OBV_REDIS_URL is not a valid URL (expected redis://host:port or rediss://host:port)');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new TypeError(`OBV_REDIS_URL must use redis: or rediss:, not ${parsed.protocol}`);
  }
  if (!parsed.hostname) throw new TypeError('OBV_REDIS_URL has no host');
}

/** Opens one connection (it connects in the background; see {@link waitUntilReady}). */
export function createRedisConnection(options: RedisConnectionOptions): Redis {
  assertRedisUrl(options.url);
  const maxDelay = options.maxReconnectDelayMs ?? DEFAULT_MAX_RECONNECT_DELAY_MS;
  const settings: RedisOptions = {
    connectionName: `obv-link:${options.role}`,
    // Switched off at the first 'ready' (below): from then on, reject at once while disconnected.
    enableOfflineQueue: true,
    // Commands in flight when the socket drops reject on that drop rather than being re-sent later.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    connectTimeout: 5_000,
    // How long a closing socket may linger before it is destroyed (ioredis's 2 s keeps a stopping
    // process alive for nothing when the socket never connected).
    disconnectTimeout: 500,
    // Never give up: 100 ms, 200 ms, 400 ms … capped. A null here would end the connection for good.
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 10), maxDelay),
    // The bus re-subscribes itself so that it knows when the subscription is live again.
    autoResubscribe: false,
  };
  const { Redis } = loadIoredis();
  const redis = options.sentinels?.length
    ? new Redis({ ...settings, ...sentinelSettings(options.url, options.sentinels, options.sentinelName) })
    : new Redis(options.url, settings);
  redis.once('ready', () => {
    redis.options.enableOfflineQueue = false;
  });
  watchConnection(redis, options.role, options.logger);
  return redis;
}

/**
 * Logs connection changes once per change (not once per failed attempt) and swallows the `error`
 * events ioredis emits while reconnecting; without a listener ioredis prints each one to stderr.
 */
function watchConnection(redis: Redis, role: string, logger: RedisLogger | undefined): void {
  let lastError = '';
  redis.on('error', (error: Error) => {
    if (error.message === lastError) return;
    lastError = error.message;
    logger?.warn({ role, err: error.message }, 'redis connection error');
  });
  redis.on('ready', () => {
    if (lastError) logger?.info({ role }, 'redis connection restored');
    lastError = '';
  });
}

/**
 * What ioredis needs to find the primary through Sentinel: the sentinels, the name, and from the URL the
 * credentials, database and TLS of the primary (Sentinel itself is asked without them).
 * @throws TypeError without a name.
 */
function sentinelSettings(
  url: string,
  sentinels: readonly { host: string; port: number }[],
  name: string | undefined,
): RedisOptions {
  if (!name) throw new TypeError('OBV_REDIS_SENTINELS needs OBV_REDIS_SENTINEL_NAME (the name Sentinel monitors)');
  const parsed = new URL(url);
  const db = parsed.pathname.replace(/^\//, '');
  return {
    sentinels: sentinels.map(({ host, port }) => ({ host, port })),
    name,
    // Not ioredis's `failoverDetector`: its +switch-master disconnect can land while a reconnect is
    // asking Sentinel, which ends the connection for good ("Connection is closed", seen in
    // test/node/redis/sentinel.test.ts). A dead primary's socket fails on its own; one demoted to a
    // replica answers READONLY, and that reconnects (asking Sentinel again), the command not resent.
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * Resolves once `redis` can take commands; rejects after `timeoutMs` (the connection keeps trying, so
 * the caller decides whether to give up).
 */
export function waitUntilReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onReady = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error(`Redis (${redis.options.connectionName ?? 'connection'}) not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    redis.once('ready', onReady);
  });
}

/** Closes `redis` gracefully (QUIT) when it is connected, and at once otherwise. */
export async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status === 'ready') {
    try {
      await redis.quit();
      // In Sentinel mode this also ends the failover detector's own connections to the sentinels.
      redis.disconnect();
      return;
    } catch {
      // Fall through: the connection dropped while quitting.
    }
  }
  redis.disconnect();
}

/** Something with a connection that can be awaited and closed. */
export interface Openable {
  ready(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Waits until `resource` is ready; on failure closes it (so no reconnect timer keeps running) and rethrows. */
export async function readyOrClose<T extends Openable>(resource: T, timeoutMs?: number): Promise<T> {
  try {
    await resource.ready(timeoutMs);
  } catch (error) {
    await resource.close();
    throw error;
  }
  return resource;
}
