// The one SQLite file a single proxy instance keeps its state in (OBV_DATA_DIR, default ./obv-link-data).
// Node's built-in SQLite (driver.ts): synchronous statements prepared once, each read-modify-write one
// transaction.
//
// Durability, chosen per record kind: the file is in WAL mode with `synchronous = NORMAL`, so every
// commit is in the operating system's hands before the call returns — a killed process (SIGKILL, a
// crash, an OOM kill) loses nothing it acknowledged. Money records (payments, removals) are committed
// with `synchronous = FULL` (`durably`): the WAL is fsynced before the answer, so they survive a power
// loss too. Sessions and events pay no fsync per write, which keeps a start within a millisecond of the
// in-memory store (docs/PERFORMANCE.md).
//
// Opening, in this order: the directory and its files are checked (data-directory.ts: ours, private, no
// links), the directory is locked for this process (instance-lock.ts: a second proxy on it is refused,
// a killed one's restart is not), then the database is opened with SQLite's normal locking, so a backup
// (backup.ts) or an operator's `sqlite3` can read it while the proxy runs. Its statements throw
// StorageFullError when the disk is full (disk-full.ts). Every failure to open is one DataDirectoryError
// line naming the cause and the fix. Several instances share state through Redis (OBV_REDIS_URL).
import { join } from 'node:path';
import { DATABASE_FILE, DataDirectoryError, diskFullMessage, prepareDataDirectory } from './data-directory.ts';
import { guardDiskSpace, isDiskFull, walCheckpointPages } from './disk-full.ts';
import { inUseMessage, lockDataDirectory } from './instance-lock.ts';
import { openDatabase, pragma, sqliteCode, SqliteUnavailableError, transaction, type SqliteDatabase } from './driver.ts';
import { StorageFullError } from '../errors.ts';

export type { SqliteDatabase } from './driver.ts';
export { DATABASE_FILE, DataDirectoryError } from './data-directory.ts';

/** The schema, version 2. Every table carries its own expiry (epoch ms) where its records expire. */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  session_id TEXT PRIMARY KEY,
  notification_ref TEXT NOT NULL UNIQUE,
  base TEXT NOT NULL,
  state TEXT NOT NULL,
  outcome TEXT,
  expires_at INTEGER NOT NULL,
  purge_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_purge ON sessions (purge_at);
CREATE TABLE IF NOT EXISTS idempotency_claims (
  key TEXT PRIMARY KEY,
  session_id TEXT,
  lease_until INTEGER,
  purge_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS markers (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  purge_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS markers_purge ON markers (purge_at);
CREATE TABLE IF NOT EXISTS link_sessions (
  id TEXT PRIMARY KEY,
  record TEXT NOT NULL,
  uses INTEGER NOT NULL DEFAULT 0,
  purge_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS payments (
  merchant_transaction_id TEXT PRIMARY KEY,
  payment_id TEXT NOT NULL,
  state TEXT NOT NULL,
  lease_expires_at INTEGER,
  record TEXT NOT NULL,
  purge_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS payments_leases ON payments (lease_expires_at) WHERE state = 'pending';
CREATE TABLE IF NOT EXISTS payment_keys (
  idempotency_key TEXT PRIMARY KEY,
  merchant_transaction_id TEXT NOT NULL,
  purge_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS saved_account_removals (
  merchant_user_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (merchant_user_id, account_id)
);
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  body TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  next_attempt_at INTEGER,
  pending_since INTEGER,
  delivered_at INTEGER,
  acknowledged_by TEXT,
  last_attempt_at INTEGER,
  last_error TEXT
);
CREATE INDEX IF NOT EXISTS events_pending ON events (created_at) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS events_undelivered ON events (seq) WHERE status != 'delivered';
CREATE TABLE IF NOT EXISTS event_jobs (
  job TEXT PRIMARY KEY,
  due_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS event_jobs_due ON event_jobs (due_at);
`;

const SCHEMA_VERSION = 2;

/**
 * Version 1 → 2: where each event's delivery stands (GET /events shows it; acknowledge and redeliver
 * change it). A pending event's next attempt is its job's due time.
 */
const TO_VERSION_2 = `
ALTER TABLE events ADD COLUMN next_attempt_at INTEGER;
ALTER TABLE events ADD COLUMN pending_since INTEGER;
ALTER TABLE events ADD COLUMN delivered_at INTEGER;
ALTER TABLE events ADD COLUMN acknowledged_by TEXT;
ALTER TABLE events ADD COLUMN last_attempt_at INTEGER;
ALTER TABLE events ADD COLUMN last_error TEXT;
UPDATE events SET pending_since = created_at,
  next_attempt_at = (SELECT due_at FROM event_jobs WHERE job = 'deliver:' || events.id)
  WHERE status = 'pending';
`;

/** The open database and the one way to commit a money record with an fsync. */
export interface SqliteHandle {
  readonly db: SqliteDatabase;
  /** The file's absolute path. */
  readonly path: string;
  /** Runs `step` as one transaction committed with `synchronous = FULL` (fsync before it returns). */
  durably<T>(step: () => T): T;
  /** Runs `step` as one transaction (driver.ts `transaction`). */
  transaction<T>(step: () => T): T;
  close(): void;
}

/**
 * Opens (creating it, and the directory, if needed) the database in `dataDir`. The directory is made
 * readable by this user only (0700), the file too (0600): it holds sealed credentials and shoppers' names.
 * @throws DataDirectoryError when the directory or the file cannot be used, or another instance holds it
 * @throws SqliteUnavailableError when this Node has no node:sqlite
 */
export function openSqliteDatabase(dataDir: string): SqliteHandle {
  const dir = prepareDataDirectory(dataDir);
  const path = join(dir, DATABASE_FILE);
  const lock = lockDataDirectory(dir);
  let raw: SqliteDatabase | undefined;
  try {
    raw = openDatabase(path, 1_000);
    raw.exec('PRAGMA journal_mode = WAL');
    raw.exec('PRAGMA synchronous = NORMAL');
    // A WAL that fits its volume (disk-full.ts): on a small one, SQLite's 4 MB default could fill it.
    raw.exec(`PRAGMA wal_autocheckpoint = ${walCheckpointPages(dir, Number(pragma(raw, 'page_size')))}`);
    migrate(raw, dir);
  } catch (error) {
    raw?.close();
    lock.release();
    throw explainOpenFailure(error, dir);
  }
  const guard = guardDiskSpace(raw, dir);
  const { db } = guard;
  const file = raw;
  let closed = false;
  return {
    db,
    path,
    durably<T>(step: () => T): T {
      db.exec('PRAGMA synchronous = FULL');
      try {
        return transaction(db, step);
      } finally {
        db.exec('PRAGMA synchronous = NORMAL');
      }
    },
    transaction: (step) => transaction(db, step),
    close() {
      if (closed) return;
      closed = true;
      guard.stop();
      file.close();
      lock.release();
    },
  };
}

/** SQLite's primary result codes an open can meet (node:sqlite's `errcode`). */
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_READONLY = 8;
const SQLITE_CORRUPT = 11;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;

/**
 * What went wrong while opening (or, in storage.ts, while the repositories first touch the file), as the
 * one line an operator acts on. Errors that already are such a line pass through.
 */
export function explainOpenFailure(error: unknown, dir: string): Error {
  if (error instanceof DataDirectoryError || error instanceof SqliteUnavailableError) return error;
  if (error instanceof StorageFullError || isDiskFull(error, dir)) return new DataDirectoryError(diskFullMessage(dir), { cause: error });
  const message = (error as Error | undefined)?.message ?? String(error);
  switch (sqliteCode(error)) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      // The lock file was ours, so the database is held by something else: a proxy of a release before
      // the lock file (it held the database itself), or a tool writing to it.
      return new DataDirectoryError(`${inUseMessage(dir)} (${DATABASE_FILE} is locked: a proxy of an earlier release, or a tool writing to it.)`, { cause: error });
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return new DataDirectoryError(`OBV_DATA_DIR ${dir}: ${DATABASE_FILE} is damaged (${message}). Stop here and restore the last backup: `
        + `move the damaged file and its -wal and -shm aside, put the backup in their place as ${DATABASE_FILE}, start again `
        + '(docs/GOING-TO-PRODUCTION.md, "Backup and restore").', { cause: error });
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
      return new DataDirectoryError(`OBV_DATA_DIR ${dir}: ${DATABASE_FILE} cannot be opened for writing (${message}): `
        + 'check that the volume is mounted writable and the files are the proxy user\'s.', { cause: error });
    default:
      return new DataDirectoryError(`OBV_DATA_DIR ${dir}: ${DATABASE_FILE} cannot be used (${message}).`, { cause: error });
  }
}

function migrate(db: SqliteDatabase, dir: string): void {
  const version = Number(pragma(db, 'user_version'));
  if (version > SCHEMA_VERSION) {
    throw new DataDirectoryError(`OBV_DATA_DIR ${dir}: ${DATABASE_FILE} was written by a newer obv-link (schema ${version}; this version knows `
      + `${SCHEMA_VERSION}): run that version, or restore a backup taken by this one.`);
  }
  transaction(db, () => {
    if (version === 1) db.exec(TO_VERSION_2);
    db.exec(SCHEMA);
    // Written only when it changes: a start that changes nothing writes nothing, so it can run on a full disk.
    if (version !== SCHEMA_VERSION) db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  });
}
