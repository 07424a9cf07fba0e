// What keeps the SQLite file fast and small as it ages, off the request path and in small steps: the
// records past their retention deleted a hundred rows at a time, the pages they freed given back to the
// file system half a megabyte at a time, each step's writes checkpointed by a checkpoint of their own in
// a worker thread (checkpointer.ts), and the WAL truncated when the proxy is idle.
// Between two steps the event loop runs (setImmediate), so no step holds a request up for more than a few
// milliseconds of CPU however large the backlog (docs/PERFORMANCE.md, "Growth"); the checkpoints, whose
// fsyncs wait for the disk, do not hold it at all.
//
// The SQLite pragmas used, as SQLite documents them:
// - `auto_vacuum = INCREMENTAL` (set once per file, database.ts): freed pages stay on the freelist until
//   `PRAGMA incremental_vacuum(N)` removes up to N of them and truncates the file by as many.
// - `journal_size_limit`: in WAL mode, when a checkpoint lets the WAL be reused, a WAL larger than the
//   limit is truncated to it, so one large transaction (the VACUUM of a conversion, a purge) does not
//   leave a large WAL behind for good.
// - `wal_checkpoint(PASSIVE)`: copies the WAL's frames into the database, syncing the WAL before and the
//   database after (in NORMAL mode too), and lets the WAL be reused from its start; run after each step
//   that wrote, so that SQLite's automatic checkpoint (1,000 pages) is not reached inside a step.
// - `wal_checkpoint(TRUNCATE)`: the same, then truncates the WAL to zero bytes; run when no commit came
//   for a second, since requests' own writes meanwhile may have grown it up to SQLite's automatic
//   checkpoint (1,000 pages, 4 MB).
// None of these acknowledges anything: they commit with `synchronous = NORMAL` and await no fsync.
import type { Logger } from 'pino';
import { safeError } from '../../common/logger.ts';
import { StorageFullError } from '../errors.ts';
import type { SqliteHandle } from './database.ts';
import { pragma, prepare, type SqlValue, type Statement } from './driver.ts';

/**
 * Rows one clean-up step deletes at most. Each row also leaves an entry in one or two indexes on random
 * keys (session ids, marker keys), so a step writes one to three pages per row: at 200,000 checkouts a
 * step of 100 sessions takes 2–4 ms of CPU (under 10 ms at its 99th percentile), one of 300 about 16 ms.
 */
export const CLEANUP_BATCH_ROWS = 100;
/** Pages one vacuum step gives back at most (512 KiB at SQLite's default 4 KiB page). */
export const VACUUM_STEP_PAGES = 128;
/** The WAL left after a checkpoint is truncated to this (SQLite's default auto-checkpoint keeps it about 4 MB). */
export const WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;
/** How long no commit must have been made before the WAL is checkpointed and truncated. */
export const IDLE_BEFORE_CHECKPOINT_MS = 1_000;

/** This thread's CPU time in ms (Node 23.9+; the process's before, which counts libuv's threads too). */
const cpuMs = (): number => {
  const { user, system } = (process.threadCpuUsage ?? process.cpuUsage)();
  return (user + system) / 1000;
};

/**
 * How long each step held the event loop, and how much of that was this thread's CPU: on a busy machine
 * the rest is the step waiting for a CPU. Checkpoints are counted too, but they run in a worker thread:
 * their time is their own (`longestCheckpointMs`), not the event loop's.
 */
export class StepTimes {
  steps = 0;
  longestMs = 0;
  totalMs = 0;
  /** What the longest step was (`delete sessions`, `vacuum`). */
  longest = '';
  /** The longest checkpoint, in its worker (copy and fsyncs): time the event loop was free meanwhile. */
  longestCheckpointMs = 0;
  /** The most CPU one step used. */
  longestCpuMs = 0;
  /** Steps run, by label. */
  readonly counts: Record<string, number> = {};

  /** Runs `step` (synchronous: it holds the event loop) and counts its time under `label`. */
  time<T>(label: string, step: () => T): T {
    const started = performance.now();
    const cpuStarted = cpuMs();
    try {
      return step();
    } finally {
      const ms = performance.now() - started;
      this.longestCpuMs = Math.max(this.longestCpuMs, cpuMs() - cpuStarted);
      this.steps++;
      this.counts[label] = (this.counts[label] ?? 0) + 1;
      this.totalMs += ms;
      if (ms > this.longestMs) {
        this.longestMs = ms;
        this.longest = label;
      }
    }
  }

  /** Counts a checkpoint that ran in the worker (checkpointer.ts) and took `ms` there. */
  checkpointed(ms: number): void {
    this.counts.checkpoint = (this.counts.checkpoint ?? 0) + 1;
    this.longestCheckpointMs = Math.max(this.longestCheckpointMs, ms);
  }
}

/** What one sweep did. */
export interface SweepReport {
  /** Records deleted, every table together. */
  deleted: number;
  /** Pages given back to the file system. */
  vacuumedPages: number;
  /** Whether the WAL was checkpointed and truncated (the proxy was idle). */
  checkpointed: boolean;
  times: StepTimes;
}

/** Lets the event loop run (I/O, timers) before the next step. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A DELETE of at most `limit` rows chosen by `where` (by rowid: portable, unlike DELETE … LIMIT, which
 * needs a compile-time option). `where` must be served by an index, so a step reads what it deletes.
 */
export function batchDelete(handle: SqliteHandle, table: string, where: string): Statement {
  return prepare(handle.db, `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${where} LIMIT ?)`);
}

/**
 * Copies what the last step wrote from the WAL into the database, in the checkpoints' worker. Left to
 * SQLite, the automatic checkpoint (every 1,000 WAL pages) would run inside whichever step crossed the
 * mark and add its copy and its two fsyncs to that step's own work, on the event loop.
 */
export async function checkpointStep(handle: SqliteHandle, times: StepTimes): Promise<void> {
  times.checkpointed((await handle.checkpoint('PASSIVE')).ms);
}

/**
 * Runs `statement` (batchDelete's) with `params` and the batch size until a step deletes fewer than a
 * batch, each step that deleted anything followed by a checkpoint step, the event loop running between
 * any two steps; stops early once `stopped()` says so.
 */
export async function deleteInBatches(
  handle: SqliteHandle,
  label: string,
  statement: Statement,
  params: SqlValue[],
  times: StepTimes,
  stopped: () => boolean = () => false,
  batch = CLEANUP_BATCH_ROWS,
): Promise<number> {
  let deleted = 0;
  while (!stopped()) {
    const changes = times.time(label, () => statement.run(...params, batch).changes);
    deleted += changes;
    if (changes === 0) break;
    await nextTurn();
    if (stopped()) break;
    await checkpointStep(handle, times);
    if (changes < batch) break;
    await nextTurn();
  }
  return deleted;
}

/** Tables whose records end at `purge_at`, each with the condition its clean-up deletes by (index-served). */
export const PURGES = [
  ['sessions', 'purge_at <= ?'],
  ['markers', 'purge_at <= ?'],
  ['link_sessions', 'purge_at <= ?'],
  ['payments', 'purge_at <= ?'],
  ['payment_keys', 'purge_at <= ?'],
  ['earlier_payments', 'purge_at <= ?'],
  // A claim still in flight (no session yet) is its start's until the process ends; the open clears those.
  ['idempotency_claims', 'purge_at <= ? AND session_id IS NOT NULL'],
] as const;

export interface HousekeepingOptions {
  now: () => number;
  logger?: Logger;
  batchRows?: number;
  vacuumPages?: number;
  idleMs?: number;
}

/** The SQLite file's sweep: run by the storage on a timer, one at a time; public for tests and the bench. */
export class Housekeeping {
  readonly #handle: SqliteHandle;
  readonly #options: Required<Omit<HousekeepingOptions, 'logger'>> & { logger?: Logger };
  readonly #purges: { table: string; statement: Statement }[];
  readonly #totalChanges: Statement<[], { changes: number }>;
  #running: Promise<SweepReport> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #wake: (() => void) | undefined;

  constructor(handle: SqliteHandle, options: HousekeepingOptions) {
    this.#handle = handle;
    this.#options = {
      batchRows: CLEANUP_BATCH_ROWS,
      vacuumPages: VACUUM_STEP_PAGES,
      idleMs: IDLE_BEFORE_CHECKPOINT_MS,
      ...options,
    };
    handle.db.exec(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    this.#purges = PURGES.map(([table, where]) => ({ table, statement: batchDelete(handle, table, where) }));
    this.#totalChanges = prepare(handle.db, 'SELECT total_changes() AS changes');
  }

  /** Sweeps every `intervalMs` (the timer does not keep the process alive). */
  start(intervalMs: number): void {
    this.#timer = setInterval(() => {
      this.sweep().catch((error: unknown) => {
        // A full disk is told once by the outage log (storage/outage-log.ts); the clean-up runs again at the next interval.
        if (error instanceof StorageFullError) return;
        this.#options.logger?.warn(
          { err: safeError(error) },
          'SQLite storage: the clean-up failed; it runs again at the next interval',
        );
      });
    }, intervalMs);
    this.#timer.unref();
  }

  /**
   * Deletes what is past its retention, gives freed pages back, and checkpoints the WAL if no commit came
   * for `idleMs`. A call while a sweep runs gets that sweep's report.
   */
  sweep(): Promise<SweepReport> {
    this.#running ??= this.#sweep().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Stops the timer and any sweep under way (at its next step), and waits for it. */
  async close(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#wake?.();
    await this.#running?.catch(() => undefined);
  }

  async #sweep(): Promise<SweepReport> {
    const report: SweepReport = { deleted: 0, vacuumedPages: 0, checkpointed: false, times: new StepTimes() };
    const stopped = () => this.#stopped;
    const at = this.#options.now();
    for (const { table, statement } of this.#purges) {
      report.deleted += await deleteInBatches(
        this.#handle,
        `delete ${table}`,
        statement,
        [at],
        report.times,
        stopped,
        this.#options.batchRows,
      );
    }
    report.vacuumedPages = await this.vacuum(report.times);
    report.checkpointed = await this.#checkpointWhenIdle(report.times);
    return report;
  }

  /** Gives the freelist's pages back to the file system, `vacuumPages` per step. */
  async vacuum(times: StepTimes): Promise<number> {
    let given = 0;
    while (!this.#stopped) {
      const free = Number(pragma(this.#handle.db, 'freelist_count'));
      if (free === 0) break;
      times.time('vacuum', () => this.#handle.db.exec(`PRAGMA incremental_vacuum(${this.#options.vacuumPages})`));
      const after = Number(pragma(this.#handle.db, 'freelist_count'));
      given += free - after;
      // Not in INCREMENTAL mode (a conversion that could not run): nothing to give back.
      if (after >= free) break;
      await nextTurn();
      if (this.#stopped) break;
      await checkpointStep(this.#handle, times);
      await nextTurn();
    }
    return given;
  }

  async #checkpointWhenIdle(times: StepTimes): Promise<boolean> {
    if (this.#stopped) return false;
    const before = this.#totalChanges.get()!.changes;
    await new Promise<void>((resolve) => {
      // Kept referenced: a script awaiting a sweep must not exit under it (close() ends the wait at once).
      const timer = setTimeout(resolve, this.#options.idleMs);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = undefined;
    if (this.#stopped || this.#totalChanges.get()!.changes !== before) return false;
    const result = await this.#handle.checkpoint('TRUNCATE');
    times.checkpointed(result.ms);
    // Busy: a commit came meanwhile; the next idle sweep truncates.
    return !result.busy;
  }
}
