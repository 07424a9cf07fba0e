// Group transactions (issue 40): the notifications that arrive together — those whose writes are asked
// for in the same turn of the event loop — commit in ONE transaction instead of one each. A COMMIT costs
// the same fixed work (the WAL's frame headers, its checksums, the lock) however little it writes, and
// notifications written together share pages (the events table's last page, the index pages above the
// leaves), so under a burst each notification pays a fraction of it. Nothing is acknowledged sooner:
// each caller still waits for the fsync after its commit (wal-sync.ts), which the group shares too.
//
// A write joins the group at most one turn after it is asked for (setImmediate: after the poll phase that
// read every request that arrived together), as if its request had arrived that much later; writes still
// commit in the order they were asked for, and none of another caller's is ever undone by this one's:
// - when one step throws, the group is rolled back and each of its writes runs again in a transaction of
//   its own, as before this file: the failing one fails alone, the others commit. A step must therefore
//   touch nothing but the database (run again from scratch, it does the same); what must follow its
//   commit in memory goes in `committed`, called right after the COMMIT that kept it, before anything
//   else can run;
// - when the transaction itself fails (BEGIN or COMMIT: a lock, the disk), every write of the group is
//   refused with that error, none run again: the next turn's writes try afresh.

export type Transaction = <T>(step: () => T) => T;

/** At most this many writes a transaction: a bounded group, whatever the burst (the rest: the next group). */
export const MAX_GROUP = 64;

interface Pending {
  step: () => unknown;
  committed: ((result: unknown) => void) | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Thrown out of the group's transaction to roll it back when one of its steps threw. */
class StepFailed extends Error {}

export class WriteBatch {
  readonly #transaction: Transaction;
  #queue: Pending[] = [];

  constructor(transaction: Transaction) {
    this.#transaction = transaction;
  }

  /**
   * Runs `step` in the next group's transaction; resolves with its result once that transaction has
   * committed. `committed`, if given, is called with the result at once after the COMMIT, synchronously.
   */
  run<T>(step: () => T, committed?: (result: T) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({
        step,
        committed: committed as ((result: unknown) => void) | undefined,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (this.#queue.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Writes every queued step now (the database is about to close); a no-op when none waits. */
  flush(): void {
    while (this.#queue.length > 0) this.#write(this.#queue.splice(0, MAX_GROUP));
  }

  #write(group: Pending[]): void {
    if (group.length === 1) return this.#alone(group[0]!);
    let results: unknown[];
    try {
      results = this.#transaction(() =>
        group.map(({ step }) => {
          try {
            return step();
          } catch {
            throw new StepFailed();
          }
        }),
      );
    } catch (error) {
      if (error instanceof StepFailed) for (const pending of group) this.#alone(pending);
      else for (const pending of group) pending.reject(error);
      return;
    }
    group.forEach((pending, index) => pending.committed?.(results[index]));
    group.forEach((pending, index) => pending.resolve(results[index]));
  }

  #alone(pending: Pending): void {
    let result: unknown;
    try {
      result = this.#transaction(pending.step);
    } catch (error) {
      return pending.reject(error);
    }
    pending.committed?.(result);
    pending.resolve(result);
  }
}
