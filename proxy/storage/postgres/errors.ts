// Where a failed PostgreSQL call becomes the backend-neutral errors (storage/errors.ts): every query the
// repositories, the bus and the rate-limit counters send goes through `Database.query` or
// `Database.transaction` (database.ts), which ask `asStorageError`, so "the database cannot be used right
// now" is decided here and nowhere else.
import { SessionBackendUnavailableError, StorageFullError } from '../errors.ts';
import { DatabaseSchemaError } from './options.ts';

/**
 * SQLSTATE classes and codes by which a reachable server says it cannot serve now (docs: "PostgreSQL
 * Error Codes"): 08 connection exception; 53 insufficient resources (53100 disk full is told apart);
 * 57P01–57P05 shut down, crashed, starting, idle session time-out; 57014 a statement time-out; 25006 a
 * read-only transaction (a standby, or a primary demoted in a failover); 40001 and 40P01 a serialization
 * failure or deadlock (the same call may succeed when tried again); 55P03 a lock not had in time;
 * 58030 an I/O error. Other codes (a constraint, a syntax error, bad data) are bugs or data problems and
 * stay 500s.
 */
const UNAVAILABLE_CODE = /^(08|53|57P0|57014|25006|40001|40P01|55P03|58030)/;
const DISK_FULL = '53100';

/** The SQLSTATE of a server's error, or undefined for anything else (a socket error, a client time-out). */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * True when `error` means the database could not be used, rather than the database refusing the query:
 * every failure that is not an error reply from the server (a refused or cut connection, a pool with no
 * connection to give within its time-out, a query unanswered past the client's time-out), and the
 * server's "not now" replies above.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // A schema this release cannot use: no retry makes it usable.
  if (error instanceof DatabaseSchemaError) return false;
  // A mistake in this code's own call (a bad parameter), not an outage.
  if (error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError) return false;
  const state = sqlState(error);
  return state === undefined || UNAVAILABLE_CODE.test(state);
}

/**
 * The error a repository rejects with: StorageFullError for a full disk, SessionBackendUnavailableError
 * (503 + Retry-After) when the database cannot be used, anything else as it is. `location` is the
 * database's address without its password.
 */
export function asStorageError(error: unknown, location: string): unknown {
  if (error instanceof SessionBackendUnavailableError || error instanceof StorageFullError) return error;
  if (sqlState(error) === DISK_FULL) return new StorageFullError(location, undefined, { cause: error });
  if (!isDatabaseUnavailable(error)) return error;
  return new SessionBackendUnavailableError(`PostgreSQL is unavailable: ${(error as Error).message}`, { cause: error });
}
