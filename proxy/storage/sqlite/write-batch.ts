// Group transactions (issue 40): the notifications that arrive together — those whose writes are asked
// for in the same turn of the event loop — commit in ONE transaction instead of one each. A COMMIT costs
// the same fixed work (the WAL's frame headers, its checksums, the lock) however little it writes, and
// notifications written together share pages (the events table's last page, the index pages above the
// leaves), so under a burst each notification pays a fraction of it. Nothing is acknowledged sooner:
// each caller still waits for the fsync after its commit (wal-sync.ts), which the group shares too.
//
// A write joins the group at most one turn after it is asked for (setImmediate: after the poll phase that
// read every request that arrived together), as if its request had arrived that much later; writes still
// commit in the order they were asked for, and none of another caller's is ever undone by this one's.
// When one step throws, the whole group is rolled back and each of its writes runs again in a transaction
// of its own, as before this file: the failing one fails alone, the others commit. A step must therefore
// be a pure function of the database (run again from scratch, it does the same).

export type Transaction = <T>(step: () => T) => T;

interface Pending {
  step: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class WriteBatch {
  readonly #transaction: Transaction;
  #queue: Pending[] = [];

  constructor(transaction: Transaction) {
    this.#transaction = transaction;
  }

  /** Runs `step` in the next group's transaction; resolves with its result once that transaction has committed. */
  run<T>(step: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { step, resolve: resolve as (value: unknown) => void, reject };
      if (this.#queue.push(pending) === 1) setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const group = this.#queue;
    this.#queue = [];
    let results: unknown[] | undefined;
    if (group.length > 1) {
      try {
        results = this.#transaction(() => group.map(({ step }) => step()));
      } catch {
        // Rolled back: each write again on its own, below.
      }
    }
    group.forEach((pending, index) => {
      if (results) return pending.resolve(results[index]);
      try {
        pending.resolve(this.#transaction(pending.step));
      } catch (error) {
        pending.reject(error);
      }
    });
  }
}
