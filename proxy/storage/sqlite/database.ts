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
// `finish`, `release`, `reconcile`, `expireLeases`), saved-account removals, and the events' outbox (`append`,
// `acknowledge`, `redeliver`). What a power loss may take back is what acknowledges nothing: a session
// just created, an idempotency claim, a one-time marker, a link session, a delivery attempt's result —
// shoppers who started in the last moments start again; nothing paid, no outcome acknowledged, no event
// recorded is lost. Reads of a session's outcome and of a payment show a change only once it is durable
// (session-store.ts, payments.ts); GET /events may list an event an fsync before it is (acknowledging it
// then waits for an fsync that covers it too).
//
// Opening, in this order: the directory and its files are checked (data-directory.ts: ours, private, no
// links), the directory is locked for this process (instance-lock.ts: a second proxy on it is refused,
// a killed one's restart is not), then the database is opened with SQLite's normal locking, so a backup
// (backup.ts) or an operator's `sqlite3` can read it while the proxy runs. Its statements throw
// StorageFullError when the disk is full (disk-full.ts). Every failure to open is one DataDirectoryError
// line naming the cause and the fix. Several instances share state through Redis (OBV_REDIS_URL).
//
// Schema 4 indexes every column a clean-up looks records up by (and the claims a start left in flight,
// which the open clears), and the file is in `auto_vacuum =
// INCREMENTAL` (converted once by a VACUUM at the open: housekeeping.ts gives freed pages back in small
// steps). Schema 5 added the earlier payments (a payment reconciled `not-charged`, kept when its order is
// paid again).
import { join } from 'node:path';
import { DATABASE_FILE, DataDirectoryError, diskFullMessage, prepareDataDirectory } from './data-directory.ts';
import { guardDiskSpace, isDiskFull, walCheckpointPages } from './disk-full.ts';
import { inUseMessage, lockDataDirectory } from './instance-lock.ts';
import {
  openDatabase,
  prepare,
  pragma,
  sqliteCode,
  SqliteUnavailableError,
  transaction,
  type SqliteDatabase,
} from './driver.ts';
import { StorageFullError } from '../errors.ts';
import { WalBarrier, type Fsync, type SyncStats } from './wal-sync.ts';
import { Checkpointer, type CheckpointMode, type CheckpointResult } from './checkpointer.ts';
import { WriteBatch } from './write-batch.ts';

export type { SqliteDatabase } from './driver.ts';
export { DATABASE_FILE, DataDirectoryError } from './data-directory.ts';

/**
 * The schema, version 6. Every table carries its own expiry (epoch ms) where its records expire, and each
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
-- The open's clean-up of claims a killed process left in flight (session-store.ts): only those rows.
CREATE INDEX IF NOT EXISTS idempotency_claims_in_flight ON idempotency_claims (session_id) WHERE session_id IS NULL;
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
-- An order's earlier payments: each reconciled not-charged, then replaced by the order's next claim.
CREATE TABLE IF NOT EXISTS earlier_payments (
  merchant_transaction_id TEXT NOT NULL,
  payment_id TEXT NOT NULL,
  record TEXT NOT NULL,
  purge_at INTEGER NOT NULL,
  PRIMARY KEY (merchant_transaction_id, payment_id)
);
CREATE INDEX IF NOT EXISTS earlier_payments_purge ON earlier_payments (purge_at);
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
  last_error TEXT,
  -- The keyed hash of the user the event names (storage/outbox.ts OutboxCodec): forgetUser's lookup.
  user_tag TEXT
);
CREATE INDEX IF NOT EXISTS events_user ON events (user_tag) WHERE user_tag IS NOT NULL;
-- Bodies still in the clear (written before schema 6): empty once the outbox has sealed them, so a start
-- finds there are none without reading every body.
CREATE INDEX IF NOT EXISTS events_clear ON events (seq) WHERE substr(body, 1, 1) = '{';
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

const SCHEMA_VERSION = 6;

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
  /** Throws the DurabilityError that ended acknowledgements (a failed fsync), if one did: what a write probe asks. */
  assertDurable(): void;
  /** Runs `step` as one transaction (driver.ts `transaction`). */
  transaction<T>(step: () => T): T;
  /**
   * Runs `step` in one transaction with the other steps asked for in the same turn of the event loop
   * (write-batch.ts); resolves once it has committed. `step` touches nothing but the database (it may run
   * again); `committed` is called with its result synchronously after the COMMIT that kept it.
   */
  batched<T>(step: () => T, committed?: (result: T) => void): Promise<T>;
  /** Checkpoints the WAL on a second connection, off the event loop (checkpointer.ts). */
  checkpoint(mode: CheckpointMode): Promise<CheckpointResult>;
  /** Closes the checkpoints' connection: before `close`, so this one is the file's last. */
  closeCheckpoints(): Promise<void>;
  close(): void;
}

export interface OpenOptions {
  /** How the WAL is flushed (tests hold it to see who waits); fs.fsync by default. */
  fsync?: Fsync;
}

/**
 * Opens (creating it, and the directory, if needed) the database in `dataDir`. The directory is made
 * readable by this user only (0700), the file too (0600): it holds sealed credentials and shoppers' names.
 * @throws DataDirectoryError when the directory or the file cannot be used, or another instance holds it
 * @throws SqliteUnavailableError when this Node has no node:sqlite
 */
export function openSqliteDatabase(dataDir: string, options: OpenOptions = {}): SqliteHandle {
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
  const barrier = new WalBarrier(`${path}-wal`, dir, options.fsync);
  const checkpointer = new Checkpointer(path, dir);
  const batch = new WriteBatch((step) => transaction(db, step));
  let closed = false;
  return {
    db,
    path,
    synced: () => barrier.synced(),
    syncStats: () => barrier.stats(),
    assertDurable() {
      if (barrier.failure) throw barrier.failure;
    },
    transaction: (step) => transaction(db, step),
    batched: (step, committed) => batch.run(step, committed),
    checkpoint: (mode) => checkpointer.run(mode),
    closeCheckpoints: () => checkpointer.close(),
    close() {
      if (closed) return;
      closed = true;
      // Writes asked for in this turn are kept (a shutdown's last notifications), not refused.
      batch.flush();
      checkpointer.terminate();
      barrier.close();
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
  if (error instanceof StorageFullError || isDiskFull(error, dir))
    return new DataDirectoryError(diskFullMessage(dir), { cause: error });
  const message = (error as Error | undefined)?.message ?? String(error);
  switch (sqliteCode(error)) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      // The lock file was ours, so the database is held by something else: a proxy of a release before
      // the lock file (it held the database itself), or a tool writing to it.
      return new DataDirectoryError(
        `${inUseMessage(dir)} (${DATABASE_FILE} is locked: a proxy of an earlier release, or a tool writing to it.)`,
        { cause: error },
      );
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return new DataDirectoryError(
        `OBV_DATA_DIR ${dir}: ${DATABASE_FILE} is damaged (${message}). Stop here and restore the last backup: ` +
          `move the damaged file and its -wal and -shm aside, put the backup in their place as ${DATABASE_FILE}, start again ` +
          '(docs/GOING-TO-PRODUCTION.md, "Backup and restore").',
        { cause: error },
      );
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
      return new DataDirectoryError(
        `OBV_DATA_DIR ${dir}: ${DATABASE_FILE} cannot be opened for writing (${message}): ` +
          "check that the volume is mounted writable and the files are the proxy user's.",
        { cause: error },
      );
    default:
      return new DataDirectoryError(`OBV_DATA_DIR ${dir}: ${DATABASE_FILE} cannot be used (${message}).`, {
        cause: error,
      });
  }
}

function migrate(db: SqliteDatabase, dir: string): void {
  const version = Number(pragma(db, 'user_version'));
  if (version > SCHEMA_VERSION) {
    throw new DataDirectoryError(
      `OBV_DATA_DIR ${dir}: ${DATABASE_FILE} was written by a newer obv-link (schema ${version}; this version knows ` +
        `${SCHEMA_VERSION}): run that version, or restore a backup taken by this one.`,
    );
  }
  transaction(db, () => {
    if (version === 1) db.exec(TO_VERSION_2);
    // 5 → 6: each event's user tag (its body is sealed by the outbox at start-up: sqlite/outbox.ts).
    if (version >= 1 && version < 6 && !hasColumn(db, 'events', 'user_tag'))
      db.exec('ALTER TABLE events ADD COLUMN user_tag TEXT');
    // Version 2 → 3 is the schema's new indexes (CREATE INDEX IF NOT EXISTS) and the conversion below;
    // 3 → 4 the partial index of the claims in flight (the open read every claim: 31 ms at 200,000).
    // 4 → 5 the table of earlier payments (CREATE TABLE IF NOT EXISTS): a reconciliation is kept, never deleted.
    db.exec(SCHEMA);
    // Written only when it changes: a start that changes nothing writes nothing, so it can run on a full disk.
    if (version !== SCHEMA_VERSION) db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  });
  convertToIncrementalVacuum(db);
}

/** Whether `table` has `column` (a file marked with an older version may already have it). */
function hasColumn(db: SqliteDatabase, table: string, column: string): boolean {
  return prepare(db, `SELECT 1 FROM pragma_table_info('${table}') WHERE name = ?`).all(column).length > 0;
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
