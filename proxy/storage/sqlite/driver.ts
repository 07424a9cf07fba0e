// Node's built-in SQLite (`node:sqlite`, Node 22.13 and later): no native module to build, nothing for
// npm to run at install. This file is the only one that loads it; the rest of storage/sqlite/ sees the
// small typed surface below (and the backup's worker thread, backup.ts, which opens its own connection).
//
// On Node 22 the module prints "ExperimentalWarning: SQLite is an experimental feature" once, when it
// is first loaded (Node 24 prints nothing). A merchant would see it at every start, so that one warning
// alone is dropped while the module loads: `process.emitWarning` is wrapped for the duration of the
// synchronous require and restored at once; every other warning, then or later, goes through untouched.
import { createRequire } from 'node:module';
import process from 'node:process';

/** A value SQLite stores or returns (integers as numbers: no column here needs 64-bit precision). */
export type SqlValue = string | number | null | Uint8Array;

/** A prepared statement, typed by its parameters and the row it reads. */
export interface Statement<Params extends SqlValue[] = SqlValue[], Row = Record<string, SqlValue>> {
  run(...params: Params): { changes: number; lastInsertRowid: number };
  get(...params: Params): Row | undefined;
  all(...params: Params): Row[];
}

/**
 * The part of node:sqlite's `DatabaseSync` used here. Declared rather than imported so that the package's
 * own type declarations need no `@types/node` recent enough to know `node:sqlite`.
 */
export interface SqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

interface SqliteModule {
  DatabaseSync: new (path: string) => SqliteDatabase;
}

/** The first Node.js with node:sqlite loadable without a flag. */
const SQLITE_NODE = [22, 13] as const;

/** Why the built-in SQLite could not be loaded, in one line an operator acts on. */
export class SqliteUnavailableError extends Error {
  constructor(cause: unknown, version = process.versions.node) {
    const [major = 0, minor = 0] = version.split('.').map(Number);
    const tooOld = major < SQLITE_NODE[0] || (major === SQLITE_NODE[0] && minor < SQLITE_NODE[1]);
    super(
      tooOld
        ? `obv-link's default storage needs Node.js ${SQLITE_NODE.join('.')} or later (its built-in node:sqlite); this is Node ${version}. ` +
            'Upgrade Node.js (24 LTS recommended), or keep state in Redis (OBV_REDIS_URL).'
        : // A recent enough Node without the module: started with --no-experimental-sqlite (NODE_OPTIONS
          // too), or built without SQLite (some distributions' packages).
          `obv-link's default storage needs node:sqlite, which this Node ${version} does not offer (${(cause as Error | undefined)?.message ?? 'not loadable'}): ` +
            'remove --no-experimental-sqlite from the command line and NODE_OPTIONS, or use the official Node.js build; or keep state in Redis (OBV_REDIS_URL).',
      { cause },
    );
    this.name = 'SqliteUnavailableError';
  }
}

let loaded: SqliteModule | undefined;

/** `node:sqlite`, loaded once, without its experimental warning. @throws SqliteUnavailableError */
export function sqliteModule(): SqliteModule {
  if (loaded) return loaded;
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/^SQLite is an experimental feature/.test(text)) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    loaded = createRequire(import.meta.url)('node:sqlite') as SqliteModule;
    return loaded;
  } catch (error) {
    throw new SqliteUnavailableError(error);
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** Opens (creating) the database file; `busyTimeoutMs` is how long a statement waits for a lock. */
export function openDatabase(path: string, busyTimeoutMs: number): SqliteDatabase {
  const db = new (sqliteModule().DatabaseSync)(path);
  // PRAGMA rather than the constructor's `timeout`, which Node 22.13 does not know yet.
  db.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  return db;
}

/** Prepares a statement with the types its callers read it with (node:sqlite's own are untyped). */
export function prepare<Params extends SqlValue[] = SqlValue[], Row = Record<string, SqlValue>>(
  db: SqliteDatabase,
  sql: string,
): Statement<Params, Row> {
  return db.prepare(sql) as unknown as Statement<Params, Row>;
}

/** A pragma's value (`PRAGMA name`), as its first column. */
export function pragma(db: SqliteDatabase, name: string): SqlValue | undefined {
  const row = db.prepare(`PRAGMA ${name}`).get();
  return row === undefined ? undefined : Object.values(row)[0];
}

/**
 * Runs `step` as one transaction: BEGIN IMMEDIATE (the write lock taken up front, so a read-modify-write
 * cannot be overtaken), COMMIT when it returns, ROLLBACK when it throws. Inside another transaction it
 * is a savepoint, so a nested step that throws undoes only its own changes.
 */
export function transaction<T>(db: SqliteDatabase, step: () => T): T {
  const nested = depth.get(db) ?? 0;
  const [begin, commit, rollback] =
    nested === 0
      ? ['BEGIN IMMEDIATE', 'COMMIT', 'ROLLBACK']
      : [`SAVEPOINT s${nested}`, `RELEASE s${nested}`, `ROLLBACK TO s${nested}; RELEASE s${nested}`];
  db.exec(begin);
  depth.set(db, nested + 1);
  try {
    const result = step();
    db.exec(commit);
    return result;
  } catch (error) {
    try {
      db.exec(rollback);
    } catch {
      // SQLite already rolled the transaction back itself (a full disk, an I/O error): nothing to undo.
    }
    throw error;
  } finally {
    depth.set(db, nested);
  }
}

const depth = new WeakMap<SqliteDatabase, number>();

/**
 * The primary SQLite result code of an error node:sqlite threw (`SQLITE_BUSY` = 5, `SQLITE_FULL` = 13…),
 * or undefined for any other error. node:sqlite's `errcode` is the extended code where SQLite has one
 * (`SQLITE_IOERR_SHMSIZE` = 4874 is an `SQLITE_IOERR`, 10): its low byte is the primary code.
 */
export function sqliteCode(error: unknown): number | undefined {
  const code = (error as { errcode?: unknown } | undefined)?.errcode;
  return typeof code === 'number' ? code & 0xff : undefined;
}
