// The PostgreSQL backend's options and their defaults, apart from the files that load `pg`: they are part
// of the package's public types (openPostgresStorage), and a declaration that imported `pg`'s types
// would make a TypeScript merchant's compiler look for @types/pg. The defaults are in config/limits.ts.
import type { OutboxCodec } from '../outbox.ts';

export { POSTGRES_DEFAULTS, POSTGRES_SCHEMA_NAME as SCHEMA_NAME } from '../../config/limits.ts';

/**
 * The PostgreSQL schema was migrated by a newer release (schema.ts): the proxy cannot use it. Here, with
 * the options, so the package's types can name it without `pg`'s.
 */
export class DatabaseSchemaError extends Error {
  override name = 'DatabaseSchemaError';
}

/** The subset of a pino logger the PostgreSQL backend writes to. */
export interface PostgresLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface PostgresStorageOptions {
  /** `postgres://user:password@host:port/database` (or `postgresql://`; `?sslmode=…` as libpq reads it). */
  url: string;
  /** The schema every table lives in, created at start-up if missing. Default `obv_link`. */
  schema?: string | undefined;
  /** Connections this instance opens at most (the pool), besides the one the relay listens on. Default 10. */
  poolSize?: number | undefined;
  /**
   * The server cancels a statement that runs longer (`statement_timeout`), and the client gives up on an
   * answer this long plus 2 s after (a frozen server, a cut network): the request answers 503. Default 5 s.
   */
  statementTimeoutMs?: number | undefined;
  /** How long a request waits for a connection (a new one, or a free one of the pool) before a 503. Default 2 s. */
  connectTimeoutMs?: number | undefined;
  /** Where the connections say they went down and came back, and migrations what they did. */
  logger?: PostgresLogger | undefined;
  now?: (() => number) | undefined;
  /** How the outbox keeps events at rest (storage/outbox.ts); default: in the clear. */
  outboxCodec?: OutboxCodec | undefined;
}

/** The database URL without its password, and the schema: for log lines and the boot line. */
export function redactedDatabaseUrl(url: string, schema: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return `${parsed.toString()} (schema ${schema})`;
  } catch {
    return `postgres (schema ${schema})`;
  }
}
