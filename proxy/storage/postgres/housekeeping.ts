// Records past their retention, deleted in small batches on a timer: every read already skips them (each
// table's `purge_at`), so the sweep only keeps the tables small. Every instance sweeps; a batch locks its
// rows with SKIP LOCKED, so two instances sweeping at once split the work instead of waiting on each
// other. The events' retention is the outbox's own `trim` (outbox.ts), on the delivery worker's timer.
import type { PostgresLogger } from './options.ts';
import type { Database } from './database.ts';
import { StoreOutageLog } from '../outage-log.ts';

/** Rows per DELETE: short statements, short locks. */
const BATCH = 500;
/** Batches per table per sweep: a backlog is worked off over several sweeps, never in one long run. */
const MAX_BATCHES = 20;

/** Each table with an expiry, and its key. */
const EXPIRING = [
  ['sessions', 'session_id'],
  ['idempotency_claims', 'key'],
  ['markers', 'key'],
  ['link_sessions', 'id'],
  ['payments', 'merchant_transaction_id'],
  ['payment_keys', 'idempotency_key'],
  ['earlier_payments', 'id'],
] as const;

/** How long the relay's session events are kept: the catch-up after a reconnect reads this far back (bus.ts). */
export const BUS_EVENT_RETENTION_MS = 10 * 60_000;

/**
 * Deletes the rows of `table` matching `condition` (its parameters `$1…` in `values`), `BATCH` at a time,
 * until none are left, `MAX_BATCHES` ran or `stopped()` says so. Resolves to the rows deleted.
 */
export async function deleteInBatches(
  db: Database,
  table: string,
  key: string,
  condition: string,
  values: unknown[],
  stopped: () => boolean,
): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < MAX_BATCHES && !stopped(); batch++) {
    const rows = await db.query(
      `DELETE FROM ${table} WHERE ${key} IN (
      SELECT ${key} FROM ${table} WHERE ${condition} LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) RETURNING 1 AS one`,
      values,
    );
    deleted += rows.length;
    if (rows.length < BATCH) break;
  }
  return deleted;
}

export class Housekeeping {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;
  #closed = false;

  constructor(
    private readonly db: Database,
    private readonly now: () => number,
    private readonly logger: PostgresLogger | undefined,
  ) {}

  start(intervalMs: number): void {
    this.#timer = setInterval(() => {
      this.sweep().catch((error: unknown) => {
        // An outage is told by the outage log (storage/outage-log.ts), not once a minute here.
        if (!StoreOutageLog.covers(error))
          this.logger?.warn(
            { err: (error as Error).message },
            'the PostgreSQL clean-up could not run; it is tried again',
          );
      });
    }, intervalMs);
    this.#timer.unref();
  }

  /** One sweep of every table (one at a time: a call while one runs gets that one's count). */
  sweep(): Promise<number> {
    this.#running ??= this.#sweep().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #sweep(): Promise<number> {
    const now = this.now();
    const stopped = () => this.#closed;
    let deleted = 0;
    for (const [table, key] of EXPIRING)
      deleted += await deleteInBatches(this.db, table, key, 'purge_at <= $1', [now], stopped);
    deleted += await deleteInBatches(this.db, 'rate_limits', 'key', 'reset_at <= $1', [now], stopped);
    deleted += await deleteInBatches(
      this.db,
      'bus_events',
      'id',
      "created_at < clock_timestamp() - $1 * interval '1 millisecond'",
      [BUS_EVENT_RETENTION_MS],
      stopped,
    );
    return deleted;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#running?.catch(() => undefined);
  }
}
