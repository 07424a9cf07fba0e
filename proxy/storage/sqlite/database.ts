// The one SQLite file a single proxy instance keeps its state in (OBV_DATA_DIR, default ./obv-link-data).
// Node's built-in SQLite (driver.ts): synchronous statements prepared once, each read-modify-write one
// transaction.
//
// Durability: the file is in WAL mode with `synchronous = NORMAL`, so every commit is in the operating
// system's hands before the call returns — a killed process (SIGKILL, a crash, an OOM kill) loses nothing,
// and a commit is visible at once. A power loss (or a kernel crash) may roll back the last commits, so
// every method whose answer is an acknowledgement awaits `synced()` (wal-sync.ts) before it resolves: an
// fsync of the WAL, off the event loop, shared by every commit made before it began (group commit). Those
// are a stored outcome (a session's `settle`), payments (`claim` — before the provider is called —
// `finish`, `release`, `expireLeases`), saved-account removals, and the events' outbox (`append`,
// `acknowledge`, `redeliver`). What a power loss may take back is what acknowledges nothing: a session
// just created, an idempotency claim, a one-time marker, a link session, a delivery attempt's result —
// shoppers who started in the last moments start again; nothing paid, no outcome acknowledged, no event
// recorded is lost. Reads of a session's outcome and of a payment show a change only once it is durable
// (session-store.ts, payments.ts); GET /events may list an event an fsync before it is (acknowledging it
// then waits for an fsync that covers it too).
//
// One instance per file: the database is opened with `locking_mode = EXCLUSIVE`, so a second proxy on
// the same directory fails at boot with a clear message instead of two processes both believing they
// hold a payment's lease. Several instances share state through Redis (OBV_REDIS_URL).
//
// Schema 3 indexes every column a clean-up looks records up by, and the file is in `auto_vacuum =
// INCREMENTAL` (converted once by a VACUUM at the open: housekeeping.ts gives freed pages back in small
// steps).
import { chmodSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openDatabase, pragma, SqliteUnavailableError, transaction, type SqliteDatabase } from './driver.ts';
import { WalBarrier, type Fsync, type SyncStats } from './wal-sync.ts';

export type { SqliteDatabase } from './driver.ts';

/** The database file's name inside the data directory. */
export const DATABASE_FILE = 'obv-link.sqlite';

/**
 * The schema, version 3. Every table carries its own expiry (epoch ms) where its records expire, and each
 * column a clean-up selects by is indexed (the sweep deletes in small batches: housekeeping.ts). Columns
 * only ever read with their row's primary key (`sessions.expires_at`, `idempotency_claims.lease_until`,
 * `events.next_attempt_at`) have none: an index there would cost every write and serve no query.
 */
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
CREATE INDEX IF NOT EXISTS idempotency_claims_purge ON idempotency_claims (purge_at);
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
CREATE INDEX IF NOT EXISTS link_sessions_purge ON link_sessions (purge_at);
CREATE TABLE IF NOT EXISTS payments (
  merchant_transaction_id TEXT PRIMARY KEY,
  payment_id TEXT NOT NULL,
  state TEXT NOT NULL,
  lease_expires_at INTEGER,
  record TEXT NOT NULL,
  purge_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS payments_leases ON payments (lease_expires_at) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS payments_purge ON payments (purge_at);
CREATE TABLE IF NOT EXISTS payment_keys (
  idempotency_key TEXT PRIMARY KEY,
  merchant_transaction_id TEXT NOT NULL,
  purge_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS payment_keys_purge ON payment_keys (purge_at);
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
-- The retention's clean-up: events no longer being delivered, oldest first.
CREATE INDEX IF NOT EXISTS events_retired ON events (created_at) WHERE status != 'pending';
CREATE TABLE IF NOT EXISTS event_jobs (
  job TEXT PRIMARY KEY,
  due_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS event_jobs_due ON event_jobs (due_at);
`;

const SCHEMA_VERSION = 3;

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

/** Why the data directory cannot be used, in words an operator acts on. */
export class DataDirectoryError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DataDirectoryError';
  }
}

/** The open database, and the one way to wait until what was committed is durable. */
export interface SqliteHandle {
  readonly db: SqliteDatabase;
  /** The file's absolute path. */
  readonly path: string;
  /**
   * Resolves once every commit made before the call survives a power loss (an fsync of the WAL that
   * began after it, shared with every other caller meanwhile: wal-sync.ts). Rejects with DurabilityError
   * when the disk failed an fsync.
   */
  synced(): Promise<void>;
  /** fsyncs run and acknowledgements that waited for one, since the open. */
  syncStats(): SyncStats;
  /** Runs `step` as one transaction (driver.ts `transaction`). */
  transaction<T>(step: () => T): T;
  close(): void;
}

export interface OpenOptions {
  /** How the WAL is flushed (tests hold it to see who waits); fs.fsync by default. */
  fsync?: Fsync;
}

/**
 * Opens (creating it, and the directory, if needed) the database in `dataDir`. The directory is made
 * readable by this user only (0700), the file too (0600): it holds sealed credentials and shoppers' names.
 * @throws DataDirectoryError when the directory cannot be created or another instance holds the file.
 */
export function openSqliteDatabase(dataDir: string, options: OpenOptions = {}): SqliteHandle {
  const dir = resolve(dataDir);
  const path = join(dir, DATABASE_FILE);
  let db: SqliteDatabase;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    db = openDatabase(path, 1_000);
  } catch (error) {
    if (error instanceof SqliteUnavailableError) throw error;
    throw new DataDirectoryError(`OBV_DATA_DIR ${dir}: cannot open ${DATABASE_FILE} (${(error as Error).message}); the proxy needs a writable directory of its own.`, { cause: error });
  }
  try {
    chmodSync(path, 0o600);
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    // The first write takes the exclusive lock now, at boot, rather than at the first shopper.
    db.exec('BEGIN IMMEDIATE; COMMIT;');
    migrate(db);
  } catch (error) {
    db.close();
    const busy = (error as { errcode?: number }).errcode === SQLITE_BUSY;
    throw new DataDirectoryError(busy
      ? `OBV_DATA_DIR ${dir} is in use by another obv-link proxy. SQLite storage is for one instance: give each its own directory, or share state through Redis (OBV_REDIS_URL) to run several.`
      : `OBV_DATA_DIR ${dir}: ${DATABASE_FILE} cannot be used (${(error as Error).message}).`, { cause: error });
  }
  const barrier = new WalBarrier(`${path}-wal`, dir, options.fsync);
  let closed = false;
  return {
    db,
    path,
    synced: () => barrier.synced(),
    syncStats: () => barrier.stats(),
    transaction: (step) => transaction(db, step),
    close() {
      if (closed) return;
      closed = true;
      barrier.close();
      db.close();
    },
  };
}

/** SQLite's primary result code for a lock held elsewhere (node:sqlite's `errcode`). */
const SQLITE_BUSY = 5;

function migrate(db: SqliteDatabase): void {
  const version = Number(pragma(db, 'user_version'));
  if (version > SCHEMA_VERSION) {
    throw new Error(`it was written by a newer obv-link (schema ${version}; this version knows ${SCHEMA_VERSION})`);
  }
  transaction(db, () => {
    if (version === 1) db.exec(TO_VERSION_2);
    // Version 2 → 3 is the schema's new indexes (CREATE INDEX IF NOT EXISTS) and the conversion below.
    db.exec(SCHEMA);
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  });
  convertToIncrementalVacuum(db);
}

/** PRAGMA auto_vacuum's value for INCREMENTAL. */
const INCREMENTAL = 2;

/**
 * Puts the file in `auto_vacuum = INCREMENTAL`, so the sweep can give freed pages back to the file system
 * a few at a time (`PRAGMA incremental_vacuum(n)`, housekeeping.ts) instead of the file only ever growing.
 * SQLite changes a file with tables from NONE to INCREMENTAL only by rebuilding it (PRAGMA auto_vacuum:
 * "changing from none to full or incremental can only occur when the database is new … or by running the
 * VACUUM command"), so this runs one VACUUM, once per file: a new file is empty then (milliseconds); a
 * file of an earlier release is rewritten once at its first start on this one (about a second per 100 MB,
 * needing that much free space). The VACUUM passes through the WAL, which is then checkpointed and
 * truncated so the copy does not stay on disk twice. Keyed on the file's own setting, not the schema
 * version: a start interrupted in between converts at the next one.
 */
function convertToIncrementalVacuum(db: SqliteDatabase): void {
  if (Number(pragma(db, 'auto_vacuum')) === INCREMENTAL) return;
  db.exec(`PRAGMA auto_vacuum = ${INCREMENTAL}`);
  db.exec('VACUUM');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
}
