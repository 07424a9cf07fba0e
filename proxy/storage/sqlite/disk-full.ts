// A full disk under the SQLite storage: every write that fails for lack of space becomes a
// StorageFullError (storage/errors.ts: `503 storage-full` with Retry-After, told once per episode by
// storage/outage-log.ts) instead of a raw SqliteError answered 500 with a stack per request.
//
// SQLite says so with SQLITE_FULL (a write came back short), or with an SQLITE_IOERR when the write that
// hit ENOSPC was a sync or the growth of the WAL's index (-shm: SQLITE_IOERR_SHMSIZE); the errno is not
// reported, so an I/O error counts as "full" when the volume has almost no room left.
//
// The WAL is kept small enough for its volume, and given back. The WAL holds committed pages until a
// checkpoint copies them into the database; by default that happens at 1,000 pages (4 MB), so on a
// small volume the WAL alone can fill it, and its pages can then never be copied (the database would
// have to grow into space the WAL holds): the proxy would stay full for good, whatever space is freed,
// since the WAL takes that too. So:
// - on a volume under 64 MB, the WAL is checkpointed when it reaches a sixteenth of the volume
//   (`walCheckpointPages`, set at the open); larger volumes keep SQLite's default;
// - after a write fails for lack of room, the WAL is checkpointed and truncated
//   (`wal_checkpoint(TRUNCATE)`), at most once a second. It may itself need room (the database grows by
//   the pages it takes in); when it cannot run, the next failure (a request, or the outage log's write
//   probe once a second) tries again;
// - the first statement that succeeds after failures has it truncated again, so the space the operator
//   freed is not kept by the WAL.
import { statfsSync } from 'node:fs';
import { StorageFullError } from '../errors.ts';
import { freeBytes } from './data-directory.ts';
import { pragma, sqliteCode, type SqliteDatabase, type Statement } from './driver.ts';

/** SQLite's primary result codes met here (node:sqlite's `errcode`). */
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
/** Below this much room, an I/O error is taken for ENOSPC (a short write or a failed sync). */
const LOW_SPACE_BYTES = 1024 * 1024;
/** At most one checkpoint attempt per this period while writes fail. */
const CHECKPOINT_INTERVAL_MS = 1_000;
/** SQLite's default `wal_autocheckpoint`, in pages. */
const DEFAULT_WAL_PAGES = 1_000;
/** The share of the volume the WAL may reach before it is checkpointed (1/16). */
const WAL_SHARE_OF_VOLUME = 16;
/** The fewest pages between checkpoints on a tiny volume (a checkpoint per few writes at worst). */
const MIN_WAL_PAGES = 8;

/**
 * `wal_autocheckpoint` for a database on the volume holding `dir`: SQLite's default, or fewer pages on a
 * volume too small for a 4 MB WAL.
 */
export function walCheckpointPages(dir: string, pageSize: number): number {
  let volumeBytes: number;
  try {
    const volume = statfsSync(dir);
    volumeBytes = volume.blocks * volume.bsize;
  } catch {
    return DEFAULT_WAL_PAGES;
  }
  return Math.max(MIN_WAL_PAGES, Math.min(DEFAULT_WAL_PAGES, Math.floor(volumeBytes / WAL_SHARE_OF_VOLUME / pageSize)));
}

/** Whether `error` (from node:sqlite) is a write refused for lack of room on the volume holding `dir`. */
export function isDiskFull(error: unknown, dir: string): boolean {
  const code = sqliteCode(error);
  if (code === SQLITE_FULL) return true;
  if (code !== SQLITE_IOERR) return false;
  const free = freeBytes(dir);
  return free !== undefined && free < LOW_SPACE_BYTES;
}

/**
 * `db`, whose statements (and `exec`) throw StorageFullError for a full disk and everything else as
 * SQLite threw it. Every repository prepares through this one connection, so none of them needs to know.
 * `stop()` before closing the database: a truncation still due is dropped.
 */
export function guardDiskSpace(db: SqliteDatabase, dir: string): { db: SqliteDatabase; stop(): void } {
  let lastCheckpoint = Number.NEGATIVE_INFINITY;
  let scheduled: NodeJS.Timeout | undefined;
  /** Since a write failed for lack of room, until a statement succeeds. */
  let failing = false;
  // At most one a second, on a timer: never inside the failed statement's transaction (driver.ts
  // `transaction` is synchronous, and a checkpoint cannot run inside one).
  const checkpointSoon = () => {
    if (scheduled) return;
    scheduled = setTimeout(
      () => {
        scheduled = undefined;
        lastCheckpoint = Date.now();
        truncateWal(db);
      },
      Math.max(0, lastCheckpoint + CHECKPOINT_INTERVAL_MS - Date.now()),
    );
    scheduled.unref();
  };
  const translate = (error: unknown): unknown => {
    if (error instanceof StorageFullError || !isDiskFull(error, dir)) return error;
    failing = true;
    checkpointSoon();
    return new StorageFullError(dir, freeBytes(dir), { cause: error });
  };
  const guarded =
    <F extends (...args: never[]) => unknown>(target: object, method: F) =>
    (...args: Parameters<F>): ReturnType<F> => {
      let result: ReturnType<F>;
      try {
        result = method.apply(target, args) as ReturnType<F>;
      } catch (error) {
        throw translate(error);
      }
      if (failing) {
        failing = false;
        checkpointSoon();
      }
      return result;
    };
  const guardedDb = forwarding(db, {
    exec: guarded(db, db.exec),
    prepare: (sql: string) => {
      const statement = db.prepare(sql);
      return forwarding(statement, {
        run: guarded(statement, statement.run),
        get: guarded(statement, statement.get),
        all: guarded(statement, statement.all),
      }) as Statement;
    },
  });
  return {
    db: guardedDb,
    stop() {
      clearTimeout(scheduled);
      scheduled = undefined;
    },
  };
}

/**
 * `wal_checkpoint(TRUNCATE)` without waiting: it would wait (busy_timeout) for a reader on an older
 * snapshot, such as a backup, to finish; with no wait it gives up at once and the next attempt runs it.
 * It fails when the database has no room yet for the WAL's pages: the next attempt runs it too.
 */
function truncateWal(db: SqliteDatabase): void {
  let busyTimeout: number | undefined;
  try {
    busyTimeout = Number(pragma(db, 'busy_timeout'));
    db.exec('PRAGMA busy_timeout = 0');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } catch {
    // Tried again at the next failure, or the next success after one.
  } finally {
    if (busyTimeout !== undefined) db.exec(`PRAGMA busy_timeout = ${busyTimeout}`);
  }
}

/**
 * `target` with `overrides` in place of some of its methods; anything else (a method node:sqlite adds
 * later, a property) is read from `target` itself, methods bound to it.
 */
function forwarding<T extends object>(target: T, overrides: Partial<Record<keyof T, unknown>>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}
