// The merchant events' outbox on SQLite, for one instance: events, their order, their delivery and their
// jobs in the data directory's file, so a restart or a crash loses no event recorded, no delivery owed
// and no acknowledgement answered (each change is one transaction, committed before the call returns).
// Recording an event (`append`), and the merchant's `acknowledge` and `redeliver`, resolve only once
// durable through a power loss too (the handle's `synced()`, database.ts); a delivery attempt's result
// does not wait (lost to a power loss, the event is only delivered once more).
// The list's order is the table's own sequence (AUTOINCREMENT: never reused, even after a trim). Reading
// a page never deletes: events past the retention go in `trim`, a hundred rows per step between which
// the event loop runs (housekeeping.ts), on the delivery worker's timer.
import type {
  AttemptOutcome,
  EventOutbox,
  EventRow,
  ListQuery,
  OutboxBacklog,
  OutboxJob,
  StoredEvent,
} from '../outbox.ts';
import { CLEAR_OUTBOX_CODEC, decodeEvent, encodeEvent, jobKey, parseJobKey, type OutboxCodec } from '../outbox.ts';
import { deliverKey, forgottenStoredEvent, storedEventOfRow } from '../outbox.ts';
import type { MerchantEvent } from '../events.ts';
import { EVENT_RETENTION_MS } from '../../config/limits.ts';
import type { SqliteHandle } from './database.ts';
import { prepare, type Statement } from './driver.ts';
import { batchDelete, deleteInBatches, StepTimes } from './housekeeping.ts';

/** A row of `events` as read here (EVENT_COLUMNS): the shared columns and the list's sequence. */
interface SqliteEventRow extends EventRow {
  seq: number;
}

const EVENT_COLUMNS =
  'seq, id, body, attempts, status, next_attempt_at, delivered_at, acknowledged_by, last_attempt_at, last_error';

/** Events past `?` (the retention's start) no longer being delivered; served by the index events_retired (database.ts). */
export const RETIRED_EVENTS = "created_at <= ? AND status != 'pending'";

/** The states each list filter keeps (`delivery` of GET /events). */
const STATES = {
  all: ['pending', 'delivered', 'failed'],
  pending: ['pending'],
  failed: ['failed'],
  undelivered: ['pending', 'failed'],
} as const;

/**
 * A list filter's condition. A filter without `delivered` also says `status != 'delivered'` in those
 * words: SQLite uses the partial index events_undelivered only for a query that repeats its WHERE, and
 * without it a page of undelivered events would read every delivered event after `after` (the whole
 * retention, at the head of the list).
 */
export function listFilter(states: readonly string[]): string {
  const listed = `status IN (${states.map((state) => `'${state}'`).join(', ')})`;
  return states.includes('delivered') ? listed : `status != 'delivered' AND ${listed}`;
}

export class SqliteEventOutbox implements EventOutbox {
  readonly #handle: SqliteHandle;
  readonly #retentionMs: number;
  readonly #codec: OutboxCodec;
  readonly #statements;
  #closed = false;
  /**
   * Events committed with a notification's outcome whose fsync is still under way (`hide`): like
   * that outcome (session-store.ts), not delivered, read or listed before a power loss can no longer take
   * them back, so no merchant hears of a link reference that a power loss then undoes.
   */
  readonly #hidden = new Set<string>();
  #trimming: Promise<{ deleted: number; times: StepTimes }> | undefined;

  constructor(handle: SqliteHandle, options: { retentionMs?: number; codec?: OutboxCodec | undefined } = {}) {
    this.#handle = handle;
    this.#retentionMs = options.retentionMs ?? EVENT_RETENTION_MS;
    this.#codec = options.codec ?? CLEAR_OUTBOX_CODEC;
    const { db } = handle;
    this.#statements = {
      insertEvent: prepare(
        db,
        "INSERT OR IGNORE INTO events (id, body, user_tag, attempts, status, created_at, next_attempt_at, pending_since) VALUES (?, ?, ?, 0, 'pending', ?, ?, ?)",
      ),
      scheduleNew: prepare(db, 'INSERT OR IGNORE INTO event_jobs (job, due_at) VALUES (?, ?)'),
      schedule: prepare(db, 'INSERT OR REPLACE INTO event_jobs (job, due_at) VALUES (?, ?)'),
      due: prepare<[number, number], { job: string }>(
        db,
        'SELECT job FROM event_jobs WHERE due_at <= ? ORDER BY due_at LIMIT ?',
      ),
      moveJob: prepare(db, 'UPDATE event_jobs SET due_at = ? WHERE job = ?'),
      deleteJob: prepare(db, 'DELETE FROM event_jobs WHERE job = ?'),
      getEvent: prepare<[string], SqliteEventRow>(db, `SELECT ${EVENT_COLUMNS} FROM events WHERE id = ?`),
      delivered: prepare(
        db,
        "UPDATE events SET status = 'delivered', attempts = attempts + 1, delivered_at = ?, acknowledged_by = 'endpoint', " +
          "last_attempt_at = ?, next_attempt_at = NULL WHERE id = ? AND status = 'pending'",
      ),
      failed: prepare(
        db,
        "UPDATE events SET status = 'failed', attempts = attempts + 1, last_attempt_at = ?, last_error = ?, next_attempt_at = NULL WHERE id = ? AND status = 'pending'",
      ),
      retried: prepare(
        db,
        "UPDATE events SET attempts = attempts + 1, last_attempt_at = ?, last_error = ?, next_attempt_at = ? WHERE id = ? AND status = 'pending'",
      ),
      acknowledged: prepare(
        db,
        "UPDATE events SET status = 'delivered', delivered_at = ?, acknowledged_by = 'api', next_attempt_at = NULL WHERE id = ? AND status != 'delivered'",
      ),
      restarted: prepare(
        db,
        "UPDATE events SET status = 'pending', attempts = 0, next_attempt_at = ?, pending_since = ?, delivered_at = NULL, acknowledged_by = NULL, " +
          "last_attempt_at = NULL, last_error = NULL WHERE id = ? AND status != 'pending'",
      ),
      hurried: prepare(
        db,
        "UPDATE events SET next_attempt_at = ? WHERE id = ? AND status = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at > ?)",
      ),
      seqOf: prepare<[string], { seq: number }>(db, 'SELECT seq FROM events WHERE id = ?'),
      // By the user's tags (one per sealing key, the index events_user): no body is read but theirs.
      ofUser: prepare<[string], { id: string; body: string }>(
        db,
        'SELECT id, body FROM events WHERE user_tag IN (SELECT value FROM json_each(?))',
      ),
      rewrite: prepare(db, 'UPDATE events SET body = ?, user_tag = ? WHERE id = ?'),
      // Bodies an earlier release wrote in the clear (JSON), sealed at start-up.
      clear: prepare<[], { id: string; body: string }>(
        db,
        "SELECT id, body FROM events WHERE substr(body, 1, 1) = '{' ORDER BY seq LIMIT 500",
      ),
      after: Object.fromEntries(
        Object.entries(STATES).map(([filter, states]) => [
          filter,
          prepare<[number, number], SqliteEventRow>(
            db,
            `SELECT ${EVENT_COLUMNS} FROM events WHERE seq > ? AND ${listFilter(states)} ORDER BY seq LIMIT ?`,
          ),
        ]),
      ) as Record<keyof typeof STATES, Statement<[number, number], SqliteEventRow>>,
      backlog: prepare<[], { pending: number; oldest: number | null }>(
        db,
        "SELECT count(*) AS pending, min(pending_since) AS oldest FROM events WHERE status = 'pending'",
      ),
      trim: batchDelete(handle, 'events', RETIRED_EVENTS),
    };
    this.#sealClearEvents();
  }

  /**
   * Seals the bodies an earlier release stored in the clear and tags them with their user, before the
   * start serves: 500 a transaction (the index events_clear finds them without reading the others);
   * writes nothing when none is left, so a start that finds nothing to do can run on a full disk.
   */
  #sealClearEvents(): void {
    if (!this.#codec.seals) return;
    for (;;) {
      const rows = this.#statements.clear.all();
      if (rows.length === 0) return;
      this.#handle.transaction(() => {
        for (const row of rows) {
          const { stored, userTag } = encodeEvent(this.#codec, decodeEvent(this.#codec, row.id, row.body).event);
          this.#statements.rewrite.run(stored, userTag, row.id);
        }
      });
    }
  }

  async append(event: MerchantEvent, nowMs: number): Promise<boolean> {
    const recorded = this.#handle.transaction(() => this.record(event, nowMs));
    // Also for an event already recorded: its first append's fsync may still be under way.
    await this.#handle.synced();
    return recorded;
  }

  /**
   * `append`'s writes without its transaction or its durable wait: for a caller that records the event in
   * its own transaction and waits itself (a notification's writes, session-store.ts `recordOutcome`).
   */
  record(event: MerchantEvent, nowMs: number): boolean {
    const { stored, userTag } = encodeEvent(this.#codec, event);
    if (this.#statements.insertEvent.run(event.id, stored, userTag, nowMs, nowMs, nowMs).changes === 0) return false;
    this.#statements.scheduleNew.run(deliverKey(event.id), nowMs);
    return true;
  }

  /**
   * An event this caller's `record` just committed, hidden until `reveal`: for a caller that waits for the
   * fsync after its commit. Called at once after that COMMIT, before anything else runs.
   */
  hide(eventId: string): void {
    this.#hidden.add(eventId);
  }

  /** The event `hide` hid is durable now: shown from now on. */
  reveal(eventId: string): void {
    this.#hidden.delete(eventId);
  }

  async scheduleSessionCheck(sessionId: string, atMs: number): Promise<void> {
    this.#statements.scheduleNew.run(jobKey({ kind: 'session-check', sessionId }), atMs);
  }

  async claimDue(nowMs: number, leaseMs: number, max: number): Promise<OutboxJob[]> {
    return this.#handle.transaction(() => {
      const jobs: OutboxJob[] = [];
      for (const { job } of this.#statements.due.all(nowMs, max)) {
        const parsed = parseJobKey(job);
        // Not durable yet: left due, the wake after its fsync (or the next poll) claims it.
        if (parsed?.kind === 'deliver' && this.#hidden.has(parsed.eventId)) continue;
        this.#statements.moveJob.run(nowMs + leaseMs, job);
        if (parsed) jobs.push(parsed);
      }
      return jobs;
    });
  }

  async get(eventId: string): Promise<StoredEvent | undefined> {
    if (this.#hidden.has(eventId)) return undefined;
    const row = this.#statements.getEvent.get(eventId);
    return row && storedEventOfRow(this.#codec, row);
  }

  async settle(eventId: string, outcome: AttemptOutcome, nowMs: number): Promise<void> {
    this.#handle.transaction(() => {
      if (outcome.ok) this.#statements.delivered.run(nowMs, nowMs, eventId);
      else this.#statements.failed.run(nowMs, outcome.error, eventId);
      this.#statements.deleteJob.run(deliverKey(eventId));
    });
  }

  async retryAt(eventId: string, error: string, nowMs: number, atMs: number): Promise<void> {
    this.#handle.transaction(() => {
      if (this.#statements.retried.run(nowMs, error, atMs, eventId).changes === 0) return;
      this.#statements.moveJob.run(atMs, deliverKey(eventId));
    });
  }

  async postpone(job: OutboxJob, atMs: number): Promise<void> {
    this.#statements.moveJob.run(atMs, jobKey(job));
  }

  async finishJob(job: OutboxJob): Promise<void> {
    this.#statements.deleteJob.run(jobKey(job));
  }

  async acknowledge(eventId: string, nowMs: number): Promise<StoredEvent | undefined> {
    const stored = this.#handle.transaction(() => {
      if (this.#statements.acknowledged.run(nowMs, eventId).changes > 0)
        this.#statements.deleteJob.run(deliverKey(eventId));
      const row = this.#statements.getEvent.get(eventId);
      return row && storedEventOfRow(this.#codec, row);
    });
    await this.#handle.synced();
    return stored;
  }

  async redeliver(eventId: string, nowMs: number): Promise<StoredEvent | undefined> {
    const stored = this.#handle.transaction(() => {
      const changed =
        this.#statements.restarted.run(nowMs, nowMs, eventId).changes +
        this.#statements.hurried.run(nowMs, eventId, nowMs).changes;
      if (changed > 0) this.#statements.schedule.run(deliverKey(eventId), nowMs);
      const row = this.#statements.getEvent.get(eventId);
      return row && storedEventOfRow(this.#codec, row);
    });
    await this.#handle.synced();
    return stored;
  }

  /** A page of the list. Events past the retention stay listed until `trim` reaches them (within its interval). */
  async list(query: ListQuery, _nowMs: number): Promise<{ events: StoredEvent[]; hasMore: boolean } | undefined> {
    let afterSeq = 0;
    if (query.after !== undefined) {
      const row = this.#statements.seqOf.get(query.after);
      if (!row) return undefined;
      afterSeq = row.seq;
    }
    const rows = this.#statements.after[query.delivery ?? 'all'].all(afterSeq, query.limit + 1);
    const events = rows.slice(0, query.limit).map((row) => storedEventOfRow(this.#codec, row));
    // The page ends before an event not durable yet: a merchant paging with `after` must not pass it.
    const hidden = this.#hidden.size === 0 ? -1 : events.findIndex(({ event }) => this.#hidden.has(event.id));
    if (hidden >= 0) return { events: events.slice(0, hidden), hasMore: true };
    return { events, hasMore: rows.length > query.limit };
  }

  async backlog(): Promise<OutboxBacklog> {
    const row = this.#statements.backlog.get()!;
    return { pending: row.pending, oldestPendingAt: row.oldest ?? undefined };
  }

  async trim(nowMs: number): Promise<void> {
    await this.trimInSteps(nowMs);
  }

  /**
   * `trim`, a hundred rows per step with the event loop running between steps: how long each step
   * held it (the bench reads it). One at a time: a call while a trim runs (a backlog can outlast the
   * worker's one-minute timer) gets that trim's result. Stops at the next step once the outbox is closed.
   */
  trimInSteps(nowMs: number, times = new StepTimes()): Promise<{ deleted: number; times: StepTimes }> {
    this.#trimming ??= deleteInBatches(
      this.#handle,
      'delete events',
      this.#statements.trim,
      [nowMs - this.#retentionMs],
      times,
      () => this.#closed,
    )
      .then((deleted) => ({ deleted, times }))
      .finally(() => {
        this.#trimming = undefined;
      });
    return this.#trimming;
  }

  async forgetUser(merchantUserId: string): Promise<number> {
    const rewritten = this.#handle.transaction(() => {
      let count = 0;
      for (const row of this.#statements.ofUser.all(JSON.stringify(this.#codec.userTags(merchantUserId)))) {
        const forgotten = forgottenStoredEvent(this.#codec, row.id, row.body, merchantUserId);
        if (!forgotten) continue;
        const { stored, userTag } = encodeEvent(this.#codec, forgotten);
        this.#statements.rewrite.run(stored, userTag, row.id);
        count++;
      }
      return count;
    });
    await this.#handle.synced();
    return rewritten;
  }

  /** The storage bundle closes the file; a trim under way stops at its next step. */
  async close(): Promise<void> {
    this.#closed = true;
  }
}
