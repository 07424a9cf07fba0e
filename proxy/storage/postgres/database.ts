// The connection pool every PostgreSQL repository shares, and the two ways they use it: one statement
// (`query`), or several in one transaction (`transaction`). Both wait for the schema (schema.ts, migrated
// once per process, in the background from construction on, so `createObvProxy` stays synchronous) and
// turn "the database cannot be used now" into the backend-neutral errors (errors.ts).
//
// Fail fast, like the Redis connections: a request waits at most `connectTimeoutMs` for a connection and
// `statementTimeoutMs` (+2 s on the client, for a frozen server) for an answer, then answers 503 with
// Retry-After; the pool opens new connections by itself once the server answers again. A connection
// that failed that way is destroyed, never handed to the next request. Durability is the server's: a
// COMMIT answers once its WAL is flushed (and, with `synchronous_standby_names`, once a standby has it),
// so everything a repository resolved is durable; a COMMIT whose answer never came is reported as
// unavailable, so nothing it did was acknowledged.
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { asStorageError, isDatabaseUnavailable } from './errors.ts';
import {
  POSTGRES_DEFAULTS,
  redactedDatabaseUrl,
  SCHEMA_NAME,
  type PostgresLogger,
  type PostgresStorageOptions,
} from './options.ts';
import { loadPg } from './packages.ts';
import { DatabaseSchemaError, migrate, type MigrationReport } from './schema.ts';

/** How long after the server should have cancelled a statement the client stops waiting for its answer. */
const CLIENT_TIMEOUT_MARGIN_MS = 2_000;
/** A transaction left open this long (a stuck process) is ended by the server, freeing its locks. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 15_000;

/** What a step inside `transaction` queries with. */
export interface Tx {
  query<Row extends QueryResultRow>(text: string, values?: unknown[]): Promise<Row[]>;
}

/**
 * Checks `url` so a typo in OBV_DATABASE_URL fails at start-up with a clear message.
 * @throws TypeError naming the problem (the URL itself is not echoed: it may hold a password).
 */
export function assertDatabaseUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError('OBV_DATABASE_URL is not a valid URL (expected postgres://user:password@host:port/database)');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new TypeError(`OBV_DATABASE_URL must use postgres: or postgresql:, not ${parsed.protocol}`);
  }
  if (!parsed.hostname) throw new TypeError('OBV_DATABASE_URL has no host');
}

export class Database {
  readonly pool: Pool;
  readonly schema: string;
  /** The database's address without its password, and the schema: safe to log. */
  readonly location: string;
  readonly url: string;
  readonly statementTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly #logger: PostgresLogger | undefined;
  #schemaReady: Promise<MigrationReport> | undefined;
  #closed = false;
  #poolError = '';

  constructor(options: PostgresStorageOptions) {
    assertDatabaseUrl(options.url);
    this.schema = options.schema ?? POSTGRES_DEFAULTS.schema;
    if (!SCHEMA_NAME.test(this.schema))
      throw new TypeError(
        'OBV_DATABASE_SCHEMA must be a lower-case SQL name: letters, digits and _, not starting with a digit',
      );
    this.url = options.url;
    this.location = redactedDatabaseUrl(options.url, this.schema);
    this.statementTimeoutMs = options.statementTimeoutMs ?? POSTGRES_DEFAULTS.statementTimeoutMs;
    this.connectTimeoutMs = options.connectTimeoutMs ?? POSTGRES_DEFAULTS.connectTimeoutMs;
    this.#logger = options.logger;
    this.pool = new (loadPg().Pool)({
      ...this.connectionSettings('pool'),
      max: options.poolSize ?? POSTGRES_DEFAULTS.poolSize,
      idleTimeoutMillis: 30_000,
    });
    // An idle connection the server ended (a restart, a failover) is an 'error' on the pool: without a
    // listener Node would end the process. Logged once per kind of error, not once per connection.
    this.pool.on('error', (error) => {
      if (error.message === this.#poolError) return;
      this.#poolError = error.message;
      this.#logger?.warn(
        { err: error.message },
        'a PostgreSQL connection of the pool ended; new ones are opened as needed',
      );
    });
    this.pool.on('connect', () => {
      if (this.#poolError) this.#logger?.info({}, 'PostgreSQL connections are being made again');
      this.#poolError = '';
    });
    // Migrations start now, so the first request finds the schema ready; failures are retried by it.
    this.ready().catch(() => undefined);
  }

  /** The settings of every connection this backend opens (the pool's, and the relay's listener). */
  connectionSettings(role: string) {
    return {
      connectionString: this.url,
      application_name: `obv-link:${role}`,
      connectionTimeoutMillis: this.connectTimeoutMs,
      statement_timeout: this.statementTimeoutMs,
      query_timeout: this.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: 5_000,
      options: `-c search_path=${this.schema}`,
    };
  }

  /**
   * Resolves once the schema is this release's (migrating it if needed). A failure because the database
   * could not be reached is tried again by the next call; a schema newer than this release is an error
   * every call rejects with.
   */
  ready(): Promise<MigrationReport> {
    this.#schemaReady ??= this.#migrate().catch((error: unknown) => {
      if (!(error instanceof DatabaseSchemaError)) this.#schemaReady = undefined;
      throw asStorageError(error, this.location);
    });
    return this.#schemaReady;
  }

  async #migrate(): Promise<MigrationReport> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    const onError = (error: Error) => (broken ??= error);
    client.on('error', onError);
    try {
      const report = await migrate(client, this.schema);
      if (report.to !== report.from)
        this.#logger?.info({ schema: this.schema, from: report.from, to: report.to }, 'PostgreSQL schema migrated');
      return report;
    } catch (error) {
      if (error instanceof DatabaseSchemaError) this.#logger?.error({ schema: this.schema }, error.message);
      else if (!isDatabaseUnavailable(error))
        this.#logger?.error(
          { schema: this.schema, err: (error as Error).message },
          'the PostgreSQL schema could not be migrated',
        );
      broken = error as Error;
      throw error;
    } finally {
      // A session-level advisory lock dies with its connection: one that failed mid-way is not reused.
      client.off('error', onError);
      client.release(broken && !(broken instanceof DatabaseSchemaError) ? broken : undefined);
    }
  }

  /** One statement, in its own transaction. */
  async query<Row extends QueryResultRow>(text: string, values?: unknown[]): Promise<Row[]> {
    await this.ready();
    try {
      return (await this.pool.query<Row>(text, values)).rows;
    } catch (error) {
      throw asStorageError(error, this.location);
    }
  }

  /**
   * `step` in one transaction (READ COMMITTED, the default: each statement sees what committed before it;
   * the steps lock what they change with the statements themselves). Commits when `step` resolves (and
   * `commitIf` says so), rolls back otherwise or when it throws. A connection that failed is destroyed.
   */
  async transaction<T>(step: (tx: Tx) => Promise<T>, options: { commitIf?: (result: T) => boolean } = {}): Promise<T> {
    await this.ready();
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw asStorageError(error, this.location);
    }
    let broken: Error | undefined;
    // The pool stops listening for a connection's 'error' while it is lent out: a server that dies
    // mid-transaction (a crash, a failover) would otherwise end the process. The failing query rejects too.
    const onError = (error: Error) => (broken ??= error);
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await step({ query: async (text, values) => (await client.query(text, values)).rows });
      await client.query(options.commitIf && !options.commitIf(result) ? 'ROLLBACK' : 'COMMIT');
      return result;
    } catch (error) {
      if (isDatabaseUnavailable(error)) broken = error as Error;
      else await client.query('ROLLBACK').catch((rollbackError: unknown) => (broken = rollbackError as Error));
      throw asStorageError(error, this.location);
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#schemaReady?.catch(() => undefined);
    await this.pool.end();
  }
}

/** A bigint column as a number (node-postgres reads int8 as a string: epoch ms fit a double exactly). */
export function num(value: string | number | null | undefined): number | undefined {
  return value === null || value === undefined ? undefined : Number(value);
}
