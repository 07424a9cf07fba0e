// The options of a Redis connection, apart from connection.ts: they are part of the package's public
// types (RedisBackendOptions), and a declaration that imports connection.ts would make a TypeScript
// merchant's compiler look for ioredis's types, which `npm install --omit=optional` leaves out.

/** The subset of a pino logger the Redis backend writes to. */
export interface RedisLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  /** For what stops the instance taking money (storage/redis/guard.ts); `warn` when absent. */
  error?(obj: object, msg: string): void;
}

export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` (TLS). */
  url: string;
  /**
   * Redis Sentinel (OBV_REDIS_SENTINELS): the primary is whichever these name for `sentinelName`, asked
   * again at every reconnect (a primary that died, or answers READONLY once demoted), so a failover is
   * followed without a restart. The URL then gives only the user, password, database and TLS (its host
   * and port are unused).
   */
  sentinels?: readonly { host: string; port: number }[] | undefined;
  /** The name Sentinel monitors the primary under (`sentinel monitor <name> …`), OBV_REDIS_SENTINEL_NAME. */
  sentinelName?: string | undefined;
  /** Shown in logs and in `CLIENT LIST`, e.g. `commands` or `subscriber`. */
  role: string;
  /** A command without a reply after this long rejects (a hung server, a half-open socket). Default 2000. */
  commandTimeoutMs?: number;
  /** Upper bound of the back-off between reconnect attempts. Default 2000. */
  maxReconnectDelayMs?: number;
  logger?: RedisLogger;
}
