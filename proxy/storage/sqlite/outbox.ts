// The merchant events' outbox on SQLite, for one instance: events, their order and their delivery jobs
// in the data directory's file, so a restart or a crash loses no event recorded and no delivery owed.
// The list's order is the table's own sequence (AUTOINCREMENT: never reused, even after a trim).
import type { EventOutbox, OutboxBacklog, OutboxJob, StoredEvent } from '../../events/outbox.ts';
import { jobKey, parseJobKey } from '../../events/outbox.ts';
import { MerchantEventSchema, type MerchantEvent } from '../../events/shapes.ts';
import { EVENT_RETENTION_MS } from '../../config/limits.ts';
import type { SqliteHandle } from './database.ts';

interface EventRow {
  seq: number;
  body: string;
  attempts: number;
  status: StoredEvent['status'];
}

export class SqliteEventOutbox implements EventOutbox {
  readonly #handle: SqliteHandle;
  readonly #retentionMs: number;
  readonly #statements;

  constructor(handle: SqliteHandle, options: { retentionMs?: number } = {}) {
    this.#handle = handle;
    this.#retentionMs = options.retentionMs ?? EVENT_RETENTION_MS;
    const { db } = handle;
    this.#statements = {
      insertEvent: db.prepare("INSERT OR IGNORE INTO events (id, body, attempts, status, created_at) VALUES (?, ?, 0, 'pending', ?)"),
      scheduleNew: db.prepare('INSERT OR IGNORE INTO event_jobs (job, due_at) VALUES (?, ?)'),
      due: db.prepare<[number, number], { job: string }>('SELECT job FROM event_jobs WHERE due_at <= ? ORDER BY due_at LIMIT ?'),
      moveJob: db.prepare('UPDATE event_jobs SET due_at = ? WHERE job = ?'),
      deleteJob: db.prepare('DELETE FROM event_jobs WHERE job = ?'),
      getEvent: db.prepare<[string], EventRow>('SELECT seq, body, attempts, status FROM events WHERE id = ?'),
      setStatus: db.prepare('UPDATE events SET status = ? WHERE id = ?'),
      countAttempt: db.prepare('UPDATE events SET attempts = attempts + 1 WHERE id = ?'),
      seqOf: db.prepare<[string], { seq: number }>('SELECT seq FROM events WHERE id = ?'),
      after: db.prepare<[number, number], { body: string }>('SELECT body FROM events WHERE seq > ? ORDER BY seq LIMIT ?'),
      backlog: db.prepare<[], { pending: number; oldest: number | null }>("SELECT count(*) AS pending, min(created_at) AS oldest FROM events WHERE status = 'pending'"),
      trim: db.prepare("DELETE FROM events WHERE created_at <= ? AND status != 'pending'"),
    };
  }

  async append(event: MerchantEvent, nowMs: number): Promise<boolean> {
    return this.#handle.db.transaction(() => {
      if (this.#statements.insertEvent.run(event.id, JSON.stringify(event), nowMs).changes === 0) return false;
      this.#statements.scheduleNew.run(jobKey({ kind: 'deliver', eventId: event.id }), nowMs);
      return true;
    })();
  }

  async scheduleSessionCheck(sessionId: string, atMs: number): Promise<void> {
    this.#statements.scheduleNew.run(jobKey({ kind: 'session-check', sessionId }), atMs);
  }

  async claimDue(nowMs: number, leaseMs: number, max: number): Promise<OutboxJob[]> {
    return this.#handle.db.transaction(() => {
      const jobs: OutboxJob[] = [];
      for (const { job } of this.#statements.due.all(nowMs, max)) {
        this.#statements.moveJob.run(nowMs + leaseMs, job);
        const parsed = parseJobKey(job);
        if (parsed) jobs.push(parsed);
      }
      return jobs;
    })();
  }

  async get(eventId: string): Promise<StoredEvent | undefined> {
    const row = this.#statements.getEvent.get(eventId);
    return row && { event: MerchantEventSchema.parse(JSON.parse(row.body)) as MerchantEvent, body: row.body, attempts: row.attempts, status: row.status };
  }

  async settle(eventId: string, status: 'delivered' | 'failed'): Promise<void> {
    this.#handle.db.transaction(() => {
      this.#statements.setStatus.run(status, eventId);
      this.#statements.deleteJob.run(jobKey({ kind: 'deliver', eventId }));
    })();
  }

  async retryAt(eventId: string, atMs: number): Promise<void> {
    this.#handle.db.transaction(() => {
      this.#statements.countAttempt.run(eventId);
      this.#statements.moveJob.run(atMs, jobKey({ kind: 'deliver', eventId }));
    })();
  }

  async postpone(job: OutboxJob, atMs: number): Promise<void> {
    this.#statements.moveJob.run(atMs, jobKey(job));
  }

  async finishSessionCheck(sessionId: string): Promise<void> {
    this.#statements.deleteJob.run(jobKey({ kind: 'session-check', sessionId }));
  }

  async list(afterId: string | undefined, limit: number, nowMs: number): Promise<{ events: MerchantEvent[]; hasMore: boolean } | undefined> {
    await this.trim(nowMs);
    let afterSeq = 0;
    if (afterId !== undefined) {
      const row = this.#statements.seqOf.get(afterId);
      if (!row) return undefined;
      afterSeq = row.seq;
    }
    const rows = this.#statements.after.all(afterSeq, limit + 1);
    const hasMore = rows.length > limit;
    return { events: rows.slice(0, limit).map((row) => MerchantEventSchema.parse(JSON.parse(row.body)) as MerchantEvent), hasMore };
  }

  async backlog(): Promise<OutboxBacklog> {
    const row = this.#statements.backlog.get()!;
    return { pending: row.pending, oldestPendingAt: row.oldest ?? undefined };
  }

  async trim(nowMs: number): Promise<void> {
    this.#statements.trim.run(nowMs - this.#retentionMs);
  }

  /** The storage bundle closes the file. */
  async close(): Promise<void> {}
}
