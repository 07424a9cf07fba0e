// The durability barrier of the SQLite file: `synced()` resolves once everything committed before the
// call is on stable storage, so a method that acknowledges (a stored outcome, a payment, an event) can
// answer "done" only when a power loss can no longer take it back.
//
// Why this and not `synchronous = FULL`: the file is in WAL mode with `synchronous = NORMAL`, so a commit
// is appended to the `-wal` file (the operating system's page cache) without an fsync. That already
// survives the process dying (SIGKILL, a crash, an OOM kill); only a power loss or a kernel crash may roll
// back the last commits (SQLite's docs, PRAGMA synchronous: "A transaction committed in WAL mode with
// synchronous=NORMAL might roll back following a power loss or system crash"). FULL would fsync the WAL
// inside every COMMIT, on the event loop, once per write. Instead this barrier fsyncs the `-wal` file
// itself, in libuv's thread pool (fs.fsync), and one fsync serves every commit made before it began:
// SQLite's own developers name flushing the WAL file as the way to make earlier WAL-mode commits durable
// (sqlite.org forum, "Switching pragma synchronous to upgrade durability").
//
// What SQLite still syncs itself, in NORMAL mode (PRAGMA synchronous): "the WAL file is synchronized
// before each checkpoint and the database file is synchronized after each completed checkpoint and the
// WAL file header is synchronized when a WAL file begins to be reused after a checkpoint". So a commit
// that a checkpoint moved into the database file, or that a reused WAL overwrote, is already durable
// there; what sits in the WAL since the last checkpoint is made durable here. The WAL file keeps its inode
// for the handle's life (a checkpoint truncates or rewrites it, never replaces it; only closing the
// database deletes it), so the descriptor opened once stays the right one. The directory is fsynced once,
// in the first round, so the database's and the WAL's names themselves survive a power loss.
//
// Group commit: one fsync at a time. A caller arriving while none runs starts one (once the microtasks of
// the current task have run, so that every caller of that task shares it); callers arriving while
// one runs wait for the next, which starts as soon as it ends and serves them all (its start is after each
// of their commits). Under load that is one fsync per fsync-time, whatever the request rate.
//
// An fsync that fails (EIO) may have dropped the pages it could not write, and a later fsync could then
// succeed without them: from the first failure on, every `synced()` rejects with that error, so nothing is
// acknowledged as durable again until the proxy restarts (SQLite then reads the WAL back as it is).
import { DurabilityError } from '../errors.ts';
import { closeSync, constants, fsync as fsyncCallback, openSync } from 'node:fs';
import { promisify } from 'node:util';

/** Flushes one file descriptor to stable storage; fs.fsync by default (tests hold it to see who waits). */
export type Fsync = (fd: number) => Promise<void>;

/** What the barrier has done since the file was opened (the bench reads it: acknowledgements per fsync). */
export interface SyncStats {
  /** fsyncs of the WAL file run (rounds). */
  fsyncs: number;
  /** `synced()` calls: acknowledgements that waited for a round. */
  acknowledgements: number;
}

export { DurabilityError };

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

const defaultFsync: Fsync = promisify(fsyncCallback);

export class WalBarrier {
  readonly #walFd: number;
  readonly #dirPath: string;
  readonly #fsync: Fsync;
  /** Callers for the next round (none has started since they called). */
  #waiting: Waiter[] = [];
  #running = false;
  #dirSynced = false;
  #failure: DurabilityError | undefined;
  #closed = false;
  readonly #stats: SyncStats = { fsyncs: 0, acknowledgements: 0 };

  /**
   * @param walPath the `-wal` file (SQLite creates it when the database enters WAL mode; created here,
   *   empty, private, if it is not there yet: SQLite takes an empty WAL as no WAL).
   * @param dirPath the directory holding it and the database file.
   */
  constructor(walPath: string, dirPath: string, fsync: Fsync = defaultFsync) {
    // Read-only is enough: on Linux fsync flushes the file's dirty pages whatever the descriptor's mode.
    this.#walFd = openSync(walPath, constants.O_RDONLY | constants.O_CREAT, 0o600);
    this.#dirPath = dirPath;
    this.#fsync = fsync;
  }

  /** Resolves once an fsync of the WAL that began after this call has completed. */
  synced(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#closed)
      return Promise.reject(new DurabilityError('the SQLite file is closed: nothing more can be acknowledged'));
    this.#stats.acknowledgements++;
    return new Promise<void>((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      if (this.#running) return;
      // Started once the current task's microtasks have run: the callers of one group's commit
      // (write-batch.ts), each told in a microtask of that task, all wait for this round, not the next.
      this.#running = true;
      queueMicrotask(() => void this.#run());
    });
  }

  /** The failed fsync that ended acknowledgements for this process, if one did. */
  get failure(): DurabilityError | undefined {
    return this.#failure;
  }

  stats(): SyncStats {
    return { ...this.#stats };
  }

  /** No new round starts; the descriptor is closed once the round under way (and the one queued) ends. */
  close(): void {
    this.#closed = true;
    if (!this.#running) closeSync(this.#walFd);
  }

  async #run(): Promise<void> {
    while (this.#waiting.length > 0) {
      const round = this.#waiting;
      this.#waiting = [];
      try {
        await this.#flush();
        for (const waiter of round) waiter.resolve();
      } catch (error) {
        this.#failure = new DurabilityError(
          `the disk failed to make a commit durable (fsync of the SQLite WAL: ${(error as Error).message}); ` +
            'nothing more is acknowledged until the proxy restarts: check the disk',
          { cause: error },
        );
        for (const waiter of [...round, ...this.#waiting]) waiter.reject(this.#failure);
        this.#waiting = [];
      }
    }
    this.#running = false;
    if (this.#closed) closeSync(this.#walFd);
  }

  async #flush(): Promise<void> {
    this.#stats.fsyncs++;
    if (!this.#dirSynced) {
      const dirFd = openSync(this.#dirPath, 'r');
      try {
        await this.#fsync(dirFd);
      } finally {
        closeSync(dirFd);
      }
      this.#dirSynced = true;
    }
    await this.#fsync(this.#walFd);
  }
}
