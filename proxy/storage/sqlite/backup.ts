// A consistent copy of the data directory's database, taken while a proxy serves on it
// (`npx obv-link-proxy backup <file>`, or `backupDatabase()` in Node).
//
// How: `VACUUM INTO` on a connection of its own. It reads the database in one read transaction, so the
// copy is the database as of one instant, whatever commits meanwhile (WAL: the proxy keeps writing, and
// nothing waits for the copy); it also leaves the free pages out. SQLite's online backup API would do
// too, but it starts over whenever another connection writes, which under load may be forever.
//
// Where: a worker thread, so a proxy in the same process keeps answering while a large file is copied.
// Its code is a small script of its own (no import of this package's modules), so it runs the same from
// the TypeScript sources and from the built package.
//
// The copy is written under a temporary name beside the target, created 0600 (it holds sealed
// credentials and shoppers' names), checked (`PRAGMA quick_check`), fsynced (VACUUM INTO does not), and
// only then given its name: a backup cut short leaves no file that looks complete. An existing file is
// never replaced unless `overwrite` says so.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DATABASE_FILE, DataDirectoryError, existingDatabase, LOCK_FILE } from './data-directory.ts';
import { sqliteCode, sqliteModule } from './driver.ts';
import { SQLITE_WORKER_PROLOGUE } from './worker-script.ts';

export interface BackupOptions {
  /** The proxy's data directory (OBV_DATA_DIR). */
  dataDir: string;
  /** Where to write the copy; its directory must exist. */
  file: string;
  /** Replace `file` if it exists. Default false: an existing file is an error. */
  overwrite?: boolean;
}

export interface BackupResult {
  /** The copy's absolute path. */
  file: string;
  /** Its size. */
  bytes: number;
  /** The database it copies. */
  database: string;
  /** How long the copy took, check and sync included. */
  tookMs: number;
}

/** Why a backup was not written, in one line (the CLI prints it). */
export class BackupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BackupError';
  }
}

/** How long the copy's read transaction waits for a lock (a checkpoint's moment of exclusive access). */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Copies the database of `dataDir` to `file`, consistently, while a proxy may be writing to it.
 * @throws DataDirectoryError when `dataDir` holds no usable database; BackupError when the copy cannot be
 * written; SqliteUnavailableError when this Node has no node:sqlite
 */
export async function backupDatabase(options: BackupOptions): Promise<BackupResult> {
  const started = Date.now();
  sqliteModule(); // SqliteUnavailableError here, in one line, rather than from inside the worker
  const { dir, path: database } = existingDatabase(options.dataDir);
  const file = resolve(options.file);
  const folder = dirname(file);
  try {
    if (!statSync(folder).isDirectory())
      throw new BackupError(`${folder} is not a directory: choose a file in an existing directory.`);
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError(`${folder} does not exist: create it, or choose a file in an existing directory.`, {
      cause: error,
    });
  }
  if (ownFile(dir, file))
    throw new BackupError(
      `${file} is one of the proxy's own files: write the backup elsewhere (another volume is best).`,
    );
  if (!options.overwrite && exists(file))
    throw new BackupError(`${file} exists: choose a new name, or pass --overwrite (overwrite: true) to replace it.`);

  const partial = join(folder, `.${basename(file)}.${randomBytes(6).toString('hex')}.partial`);
  try {
    // Created empty and private here: VACUUM INTO writes into an empty file, and would create a missing
    // one with the process's default mode.
    const fd = openSync(
      partial,
      constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0),
      0o600,
    );
    try {
      fchmodSync(fd, 0o600);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    throw writeFailure(error, folder);
  }
  try {
    await copyInWorker(database, partial);
    place(partial, file, options.overwrite === true);
  } catch (error) {
    try {
      unlinkSync(partial);
    } catch {
      // Already given its name, or never written.
    }
    throw error instanceof BackupError || error instanceof DataDirectoryError
      ? error
      : writeFailure(error, folder, dir);
  }
  syncDirectory(folder);
  return { file, bytes: statSync(file).size, database, tookMs: Date.now() - started };
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether `file` would land on the database, its WAL or index, or the lock file. */
function ownFile(dir: string, file: string): boolean {
  const name = basename(file);
  if (!name.startsWith(DATABASE_FILE) && name !== LOCK_FILE) return false;
  try {
    return realpathSync(dirname(file)) === realpathSync(dir);
  } catch {
    return false;
  }
}

/** Gives the finished copy its name: never over an existing file unless `overwrite`. */
function place(partial: string, file: string, overwrite: boolean): void {
  if (overwrite) {
    renameSync(partial, file);
    return;
  }
  try {
    // A hard link fails if the name exists, atomically: no window in which another file could be replaced.
    linkSync(partial, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw new BackupError(`${file} exists: choose a new name, or pass --overwrite (overwrite: true) to replace it.`, {
        cause: error,
      });
    // A filesystem without hard links: check, then rename.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw error;
    if (exists(file))
      throw new BackupError(`${file} exists: choose a new name, or pass --overwrite (overwrite: true) to replace it.`, {
        cause: error,
      });
    renameSync(partial, file);
    return;
  }
  unlinkSync(partial);
}

/** Makes the copy's name durable too (a rename is a change of the directory). */
function syncDirectory(folder: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(folder, constants.O_RDONLY);
    fsyncSync(fd);
  } catch {
    // Not every platform can sync a directory (Windows); the file itself was synced.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** SQLite's primary result codes met here (node:sqlite's `errcode`). */
const SQLITE_BUSY = 5;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_NOTADB = 26;

function writeFailure(error: unknown, folder: string, dir?: string): Error {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const errcode = sqliteCode(error);
  const message = (error as Error | undefined)?.message ?? String(error);
  if (code === 'ENOSPC' || code === 'EDQUOT' || errcode === SQLITE_FULL) {
    return new BackupError(
      `the disk holding ${folder} is full: free space there, or write the backup to another volume.`,
      { cause: error },
    );
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new BackupError(`${folder} is not writable by this user (${code}): choose a directory it may write in.`, {
      cause: error,
    });
  }
  if (dir && (errcode === SQLITE_CORRUPT || errcode === SQLITE_NOTADB)) {
    return new DataDirectoryError(
      `OBV_DATA_DIR ${dir}: ${DATABASE_FILE} is damaged (${message}); no backup was written. Restore the last good backup ` +
        '(docs/GOING-TO-PRODUCTION.md, "Backup and restore").',
      { cause: error },
    );
  }
  if (dir && errcode === SQLITE_BUSY) {
    return new BackupError(
      `OBV_DATA_DIR ${dir}: ${DATABASE_FILE} stayed locked for ${BUSY_TIMEOUT_MS / 1000} s (a tool holding it exclusively?); no backup was written: try again.`,
      { cause: error },
    );
  }
  return new BackupError(`no backup was written: ${message}`, { cause: error });
}

/**
 * The worker's script (worker-script.ts): it copies, checks the copy, syncs it, and posts `{ ok: true }`
 * or the error's message and SQLite code.
 */
const WORKER_SCRIPT = `${SQLITE_WORKER_PROLOGUE}
const fs = require('node:fs');
const { database, target, busyTimeoutMs } = workerData;
let source;
let copy;
try {
  source = new sqlite.DatabaseSync(database, { readOnly: true });
  source.exec('PRAGMA busy_timeout = ' + busyTimeoutMs);
  source.prepare('VACUUM INTO ?').run(target);
  source.close();
  source = undefined;
  copy = new sqlite.DatabaseSync(target, { readOnly: true });
  const checks = copy.prepare('PRAGMA quick_check').all().map((row) => Object.values(row)[0]);
  copy.close();
  copy = undefined;
  if (checks.length !== 1 || checks[0] !== 'ok') throw new Error('the copy failed its check: ' + checks.slice(0, 3).join('; '));
  const fd = fs.openSync(target, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  parentPort.postMessage({ ok: true });
} catch (error) {
  try { source && source.close(); } catch {}
  try { copy && copy.close(); } catch {}
  parentPort.postMessage({ ok: false, message: String(error && error.message || error), errcode: error && error.errcode, code: error && error.code });
}
`;

function copyInWorker(database: string, target: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    // No --import hooks needed (and none wanted: the script is plain JavaScript).
    const worker = new Worker(WORKER_SCRIPT, {
      eval: true,
      workerData: { database, target, busyTimeoutMs: BUSY_TIMEOUT_MS },
      execArgv: [],
    });
    let settled = false;
    worker.once('message', (result: { ok: boolean; message?: string; errcode?: number; code?: string }) => {
      settled = true;
      if (result.ok) resolvePromise();
      else reject(Object.assign(new Error(result.message), { errcode: result.errcode, code: result.code }));
    });
    worker.once('error', (error) => {
      settled = true;
      reject(error);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the backup's worker stopped (exit code ${code}) before it finished`));
    });
  });
}
