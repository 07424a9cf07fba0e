// One proxy per data directory, while other processes may still read the database (a backup, an
// operator's `sqlite3`). The database itself is opened with SQLite's normal locking (WAL: readers and a
// writer side by side); the one-instance guarantee is a lock on a second, empty SQLite file in the
// directory, held for the process's life. The lock is the operating system's (a POSIX record lock,
// through SQLite's own file locking), so it is dropped when the process ends in any way — SIGKILL and
// an OOM kill included — and a restarted proxy takes the directory at once.
//
// Why another SQLite file rather than a lock file of our own: Node has no flock(); SQLite's locking is
// the one that is portable here, and it already serves the database next door.
import { join } from 'node:path';
import { DataDirectoryError, diskFullMessage, LOCK_FILE } from './data-directory.ts';
import { openDatabase, sqliteCode, SqliteUnavailableError, type SqliteDatabase } from './driver.ts';

/**
 * How long a start waits for the lock: a proxy stopping (SIGTERM, its drain over) lets go within this,
 * so a restart that overlaps it is not refused; a running one keeps it and the start is refused.
 */
const LOCK_WAIT_MS = 1_000;

/** SQLite's primary result codes met here (node:sqlite's `errcode`). */
const SQLITE_BUSY = 5;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_NOTADB = 26;

export interface InstanceLock {
  release(): void;
}

/** The words of a refusal because another proxy holds the directory (operators and tests read them). */
export function inUseMessage(dir: string): string {
  return (
    `OBV_DATA_DIR ${dir} is in use by another obv-link proxy. SQLite storage is for one instance: give each its own directory, ` +
    'or share state through Redis (OBV_REDIS_URL) to run several.'
  );
}

/**
 * Takes the data directory for this process (the lock file must exist: data-directory.ts creates it).
 * @throws DataDirectoryError when another proxy holds it, or the lock file cannot be used
 */
export function lockDataDirectory(dir: string): InstanceLock {
  let db: SqliteDatabase | undefined;
  try {
    db = openDatabase(join(dir, LOCK_FILE), LOCK_WAIT_MS);
    // EXCLUSIVE locking mode keeps every lock this connection takes until it closes; the empty
    // transaction takes the exclusive one. The journal in memory (node:sqlite refuses OFF): the file
    // holds nothing worth one, and no -journal file is left beside it. The first start writes the
    // file's 4 KB header once; later starts write nothing.
    db.exec('PRAGMA journal_mode = MEMORY');
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (error) {
    db?.close();
    if (error instanceof SqliteUnavailableError) throw error;
    const code = sqliteCode(error);
    if (code === SQLITE_BUSY) throw new DataDirectoryError(inUseMessage(dir), { cause: error });
    if (code === SQLITE_FULL) throw new DataDirectoryError(diskFullMessage(dir), { cause: error });
    if (code === SQLITE_NOTADB || code === SQLITE_CORRUPT) {
      throw new DataDirectoryError(
        `OBV_DATA_DIR ${dir}: the lock file ${LOCK_FILE} is damaged (it holds no data): ` +
          `remove it while no proxy runs on this directory, then start again.`,
        { cause: error },
      );
    }
    throw new DataDirectoryError(
      `OBV_DATA_DIR ${dir}: the lock file ${LOCK_FILE} cannot be used (${(error as Error).message}).`,
      { cause: error },
    );
  }
  const held = db;
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      held.close();
    },
  };
}
