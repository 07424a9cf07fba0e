// The WAL's checkpoints, run on a second connection in a worker thread so that their copy and their two
// fsyncs (the WAL's before, the database's after) never hold the proxy's event loop. At 200,000
// checkouts a checkpoint step on the main thread held it 124 ms while waiting for the disk, the rest of
// the clean-up never more than 16 ms of CPU (docs/PERFORMANCE.md, "Growth").
//
// This works because the database is opened with SQLite's normal locking (one proxy per directory is
// the lock file's job, instance-lock.ts): a WAL-mode database takes checkpoints from any connection.
// The worker's connection never waits for a lock (`busy_timeout = 0`):
// - `PASSIVE` copies what no reader still needs and never blocks a writer; it is what the clean-up asks
//   for after each step that wrote.
// - `TRUNCATE` (asked for when the proxy is idle) first copies with PASSIVE, so that only the reset is
//   left: it holds the writer's lock for the moment of truncating an already copied WAL. If a commit is
//   under way it answers busy and nothing is truncated: the next idle sweep tries again.
// SQLite's own automatic checkpoint (every `wal_autocheckpoint` pages) stays on the committing
// connection as a floor: with the clean-up's checkpoints in the worker it is rarely reached.
import { Worker } from 'node:worker_threads';
import { StorageFullError } from '../errors.ts';
import { freeBytes } from './data-directory.ts';
import { SQLITE_WORKER_PROLOGUE } from './worker-script.ts';

export type CheckpointMode = 'PASSIVE' | 'TRUNCATE';

/** What one checkpoint did, as `PRAGMA wal_checkpoint` reports it, and how long it took in the worker. */
export interface CheckpointResult {
  /** A lock held it back (a TRUNCATE met a commit under way): nothing was truncated. */
  busy: boolean;
  /** Frames in the WAL, and how many of them are now in the database. */
  logFrames: number;
  checkpointedFrames: number;
  ms: number;
}

const SQLITE_FULL = 13;

const WORKER_SCRIPT = `${SQLITE_WORKER_PROLOGUE}
const db = new sqlite.DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 0');
const checkpoint = (mode) => {
  const row = db.prepare('PRAGMA wal_checkpoint(' + mode + ')').get();
  return { busy: row.busy !== 0, logFrames: row.log, checkpointedFrames: row.checkpointed };
};
parentPort.on('message', ({ id, mode }) => {
  if (mode === 'CLOSE') {
    db.close();
    parentPort.close();
    return;
  }
  const started = performance.now();
  try {
    let result = checkpoint('PASSIVE');
    if (mode === 'TRUNCATE' && !result.busy) result = checkpoint('TRUNCATE');
    parentPort.postMessage({ id, ok: true, ...result, ms: performance.now() - started });
  } catch (error) {
    parentPort.postMessage({ id, ok: false, message: String(error && error.message || error), errcode: error && error.errcode });
  }
});
`;

interface Reply extends Partial<CheckpointResult> {
  id: number;
  ok: boolean;
  message?: string;
  errcode?: number;
}

/** One worker thread and its connection to `path`, started at the first checkpoint. */
export class Checkpointer {
  readonly #path: string;
  readonly #dir: string;
  #worker: Worker | undefined;
  #next = 0;
  readonly #waiting = new Map<
    number,
    { resolve: (result: CheckpointResult) => void; reject: (error: Error) => void }
  >();
  #closed = false;

  constructor(path: string, dir: string) {
    this.#path = path;
    this.#dir = dir;
  }

  /** Runs a checkpoint in the worker; rejects with StorageFullError when the disk is full. */
  run(mode: CheckpointMode): Promise<CheckpointResult> {
    if (this.#closed) return Promise.reject(new Error('the SQLite storage is closed'));
    const worker = this.#start();
    const id = this.#next++;
    // Referenced while a checkpoint is under way, so a script awaiting one does not exit under it.
    worker.ref();
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      worker.postMessage({ id, mode });
    });
  }

  /** Closes the worker's connection before the main one closes, so the main one is the last (it removes the WAL). */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ id: -1, mode: 'CLOSE' });
    await exited;
  }

  /** For a synchronous close on an error path: stops the worker without waiting. */
  terminate(): void {
    this.#closed = true;
    void this.#worker?.terminate();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    // No --import hooks needed (and none wanted: the script is plain JavaScript).
    const worker = new Worker(WORKER_SCRIPT, { eval: true, workerData: { path: this.#path }, execArgv: [] });
    // A worker waiting for work must not keep the process alive (run() refers to it while one is under way).
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiter = this.#waiting.get(reply.id);
      if (!waiter) return;
      this.#waiting.delete(reply.id);
      if (this.#waiting.size === 0) worker.unref();
      if (reply.ok) {
        waiter.resolve({
          busy: reply.busy!,
          logFrames: reply.logFrames!,
          checkpointedFrames: reply.checkpointedFrames!,
          ms: reply.ms!,
        });
      } else if (reply.errcode !== undefined && (reply.errcode & 0xff) === SQLITE_FULL) {
        waiter.reject(new StorageFullError(this.#dir, freeBytes(this.#dir)));
      } else {
        waiter.reject(
          Object.assign(new Error(`SQLite checkpoint failed: ${reply.message}`), { errcode: reply.errcode }),
        );
      }
    });
    const failAll = (error: Error) => {
      for (const waiter of this.#waiting.values()) waiter.reject(error);
      this.#waiting.clear();
      this.#worker = undefined;
    };
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`the SQLite checkpoint worker stopped (exit code ${code})`)));
    this.#worker = worker;
    return worker;
  }
}
