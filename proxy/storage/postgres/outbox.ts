// The merchant events' outbox on PostgreSQL, shared by every instance, as pg-boss, graphile-worker and
// River keep their jobs: events and their delivery in `events`, the work in `event_jobs`. A worker claims
// due jobs with `FOR UPDATE SKIP LOCKED` (instances never wait on, nor take, each other's rows) and
// leases them in the same statement: the job's `due_at` moves to the lease's end and `leased_by` names
// the instance. A job whose instance died is claimed again by another once its lease ends; a finished
// job is deleted. So an event is sent at least once, and more than once only when an instance died (or
// ran past its lease) mid-attempt — the merchant de-duplicates on the event id.
//
// The list's order: an event's place is (the id of the transaction that recorded it, its sequence). A
// page shows only events whose transaction is older than every transaction still open
// (`pg_snapshot_xmin`), so no later commit can land before an event already listed: a merchant paging
// with `after` never skips one (a sequence alone would: numbers are taken at insert, not at commit).
// The price is that an event is listed only once the oldest transaction open at that moment has ended
// (milliseconds; a long transaction elsewhere on the server holds the list back, never loses an event).
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
import { num, type Database, type Tx } from './database.ts';
import type { PostgresLogger } from './options.ts';
import { deleteInBatches } from './housekeeping.ts';

const EVENT_COLUMNS =
  'id, body, attempts, status, next_attempt_at, delivered_at, acknowledged_by, last_attempt_at, last_error';

/** The condition each list filter adds (`delivery` of GET /events); those without `delivered` match the partial index. */
const FILTERS = {
  all: '',
  pending: "AND status <> 'delivered' AND status = 'pending'",
  failed: "AND status <> 'delivered' AND status = 'failed'",
  undelivered: "AND status <> 'delivered'",
} as const;

export class PostgresEventOutbox implements EventOutbox {
  readonly #db: Database;
  readonly #instance: string;
  readonly #retentionMs: number;
  readonly #codec: OutboxCodec;
  #closed = false;
  /** The start-up pass sealing the bodies an earlier release wrote in the clear; forgetUser waits for it. */
  #sealing: Promise<void> | undefined;

  constructor(
    db: Database,
    options: {
      instance: string;
      retentionMs?: number;
      codec?: OutboxCodec | undefined;
      logger?: PostgresLogger | undefined;
    },
  ) {
    this.#db = db;
    this.#instance = options.instance;
    this.#retentionMs = options.retentionMs ?? EVENT_RETENTION_MS;
    this.#codec = options.codec ?? CLEAR_OUTBOX_CODEC;
    if (this.#codec.seals) {
      // In the background once the schema is migrated; a failure (the database away) is tried again by forgetUser.
      this.#sealing = this.#sealClearEvents().catch((error: unknown) => {
        this.#sealing = undefined;
        options.logger?.warn(
          { err: error },
          'outbox: sealing the events stored in the clear failed; tried again later',
        );
      });
    }
  }

  /**
   * Seals the bodies an earlier release stored in the clear and tags them with their user, a batch per
   * transaction; rows another instance is sealing at the same moment are skipped (it seals them).
   */
  async #sealClearEvents(): Promise<void> {
    await this.#db.ready();
    for (;;) {
      if (this.#closed) return;
      const sealed = await this.#db.transaction(async (tx) => {
        const rows = await tx.query<{ id: string; body: string }>(
          "SELECT id, body FROM events WHERE left(body, 1) = '{' ORDER BY seq LIMIT 200 FOR UPDATE SKIP LOCKED",
        );
        for (const row of rows) await this.#rewrite(tx, row.id, decodeEvent(this.#codec, row.id, row.body).event);
        return rows.length;
      });
      if (sealed === 0) return;
    }
  }

  async #rewrite(tx: Tx, eventId: string, event: MerchantEvent): Promise<void> {
    const { stored, userTag } = encodeEvent(this.#codec, event);
    await tx.query('UPDATE events SET body = $1, user_tag = $2 WHERE id = $3', [stored, userTag, eventId]);
  }

  async append(event: MerchantEvent, nowMs: number): Promise<boolean> {
    return this.record(this.#db, event, nowMs);
  }

  /**
   * `append`'s statement on `tx`: for a caller that records the event in its own transaction (a
   * notification's writes, session-store.ts `recordOutcome`).
   */
  async record(tx: Tx, event: MerchantEvent, nowMs: number): Promise<boolean> {
    // The event and its delivery job in one statement: both or neither.
    const { stored, userTag } = encodeEvent(this.#codec, event);
    const rows = await tx.query(
      `WITH recorded AS (
        INSERT INTO events (id, body, user_tag, attempts, status, created_at, next_attempt_at, pending_since) VALUES ($1, $2, $5, 0, 'pending', $3, $3, $3)
        ON CONFLICT (id) DO NOTHING RETURNING id),
      queued AS (INSERT INTO event_jobs (job, due_at) SELECT $4, $3 FROM recorded ON CONFLICT (job) DO NOTHING)
      SELECT id FROM recorded`,
      [event.id, stored, nowMs, deliverKey(event.id), userTag],
    );
    return rows.length === 1;
  }

  async scheduleSessionCheck(sessionId: string, atMs: number): Promise<void> {
    await this.#db.query('INSERT INTO event_jobs (job, due_at) VALUES ($1, $2) ON CONFLICT (job) DO NOTHING', [
      jobKey({ kind: 'session-check', sessionId }),
      atMs,
    ]);
  }

  async claimDue(nowMs: number, leaseMs: number, max: number): Promise<OutboxJob[]> {
    const rows = await this.#db.query<{ job: string }>(
      `WITH due AS (
        SELECT job FROM event_jobs WHERE due_at <= $1 ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED)
      UPDATE event_jobs SET due_at = $2, leased_by = $4 FROM due WHERE event_jobs.job = due.job RETURNING event_jobs.job`,
      [nowMs, nowMs + leaseMs, max, this.#instance],
    );
    return rows.flatMap(({ job }) => parseJobKey(job) ?? []);
  }

  async get(eventId: string): Promise<StoredEvent | undefined> {
    const [row] = await this.#db.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE id = $1`, [eventId]);
    return row && storedEventOfRow(this.#codec, row);
  }

  async settle(eventId: string, outcome: AttemptOutcome, nowMs: number): Promise<void> {
    const change = outcome.ok
      ? "status = 'delivered', attempts = attempts + 1, delivered_at = $2, acknowledged_by = 'endpoint', last_attempt_at = $2, next_attempt_at = NULL"
      : "status = 'failed', attempts = attempts + 1, last_attempt_at = $2, last_error = $4, next_attempt_at = NULL";
    await this.#db.query(
      `WITH settled AS (UPDATE events SET ${change} WHERE id = $1 AND status = 'pending')
      DELETE FROM event_jobs WHERE job = $3`,
      [eventId, nowMs, deliverKey(eventId), ...(outcome.ok ? [] : [outcome.error])],
    );
  }

  async retryAt(eventId: string, error: string, nowMs: number, atMs: number): Promise<void> {
    await this.#db.query(
      `WITH retried AS (
        UPDATE events SET attempts = attempts + 1, last_attempt_at = $2, last_error = $3, next_attempt_at = $4 WHERE id = $1 AND status = 'pending' RETURNING id)
      UPDATE event_jobs SET due_at = $4, leased_by = NULL WHERE job = $5 AND EXISTS (SELECT 1 FROM retried)`,
      [eventId, nowMs, error, atMs, deliverKey(eventId)],
    );
  }

  async postpone(job: OutboxJob, atMs: number): Promise<void> {
    await this.#db.query('UPDATE event_jobs SET due_at = $2, leased_by = NULL WHERE job = $1', [jobKey(job), atMs]);
  }

  async finishJob(job: OutboxJob): Promise<void> {
    await this.#db.query('DELETE FROM event_jobs WHERE job = $1', [jobKey(job)]);
  }

  async acknowledge(eventId: string, nowMs: number): Promise<StoredEvent | undefined> {
    // A statement's sub-queries read the table as it was before it: the changed row comes from RETURNING.
    const [row] = await this.#db.query<EventRow>(
      `WITH acknowledged AS (
        UPDATE events SET status = 'delivered', delivered_at = $2, acknowledged_by = 'api', next_attempt_at = NULL
        WHERE id = $1 AND status <> 'delivered' RETURNING ${EVENT_COLUMNS}),
      unqueued AS (DELETE FROM event_jobs WHERE job = $3 AND EXISTS (SELECT 1 FROM acknowledged))
      SELECT * FROM acknowledged
      UNION ALL SELECT ${EVENT_COLUMNS} FROM events WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM acknowledged)`,
      [eventId, nowMs, deliverKey(eventId)],
    );
    return row && storedEventOfRow(this.#codec, row);
  }

  async redeliver(eventId: string, nowMs: number): Promise<StoredEvent | undefined> {
    // A delivered or failed event starts a new delivery; a pending one is hurried unless an attempt is
    // already due or under way. The two UPDATEs' conditions exclude each other, so at most one applies.
    const [row] = await this.#db.query<EventRow>(
      `WITH restarted AS (
        UPDATE events SET status = 'pending', attempts = 0, next_attempt_at = $2, pending_since = $2, delivered_at = NULL, acknowledged_by = NULL,
          last_attempt_at = NULL, last_error = NULL WHERE id = $1 AND status <> 'pending' RETURNING ${EVENT_COLUMNS}),
      hurried AS (
        UPDATE events SET next_attempt_at = $2 WHERE id = $1 AND status = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at > $2)
        RETURNING ${EVENT_COLUMNS}),
      changed AS (SELECT * FROM restarted UNION ALL SELECT * FROM hurried),
      queued AS (INSERT INTO event_jobs (job, due_at) SELECT $3, $2 FROM changed
        ON CONFLICT (job) DO UPDATE SET due_at = excluded.due_at, leased_by = NULL)
      SELECT * FROM changed
      UNION ALL SELECT ${EVENT_COLUMNS} FROM events WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM changed)`,
      [eventId, nowMs, deliverKey(eventId)],
    );
    return row && storedEventOfRow(this.#codec, row);
  }

  async list(query: ListQuery, _nowMs: number): Promise<{ events: StoredEvent[]; hasMore: boolean } | undefined> {
    const filter = FILTERS[query.delivery ?? 'all'];
    const visible = 'tx < pg_snapshot_xmin(pg_current_snapshot())';
    let rows: EventRow[];
    if (query.after === undefined) {
      rows = await this.#db.query<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE ${visible} ${filter} ORDER BY tx, seq LIMIT $1`,
        [query.limit + 1],
      );
    } else {
      const [place] = await this.#db.query<{ tx: string; seq: string }>('SELECT tx, seq FROM events WHERE id = $1', [
        query.after,
      ]);
      if (!place) return undefined;
      rows = await this.#db.query<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE (tx, seq) > ($1::xid8, $2::bigint) AND ${visible} ${filter}
        ORDER BY tx, seq LIMIT $3`,
        [place.tx, place.seq, query.limit + 1],
      );
    }
    return {
      events: rows.slice(0, query.limit).map((row) => storedEventOfRow(this.#codec, row)),
      hasMore: rows.length > query.limit,
    };
  }

  async backlog(): Promise<OutboxBacklog> {
    const [row] = await this.#db.query<{ pending: string; oldest: string | null }>(
      "SELECT count(*) AS pending, min(pending_since) AS oldest FROM events WHERE status = 'pending'",
    );
    return { pending: Number(row?.pending ?? 0), oldestPendingAt: num(row?.oldest) };
  }

  /** Events past the retention that are no longer being delivered, a batch at a time (any instance may run it at once). */
  async trim(nowMs: number): Promise<void> {
    await deleteInBatches(
      this.#db,
      'events',
      'seq',
      "created_at <= $1 AND status <> 'pending'",
      [nowMs - this.#retentionMs],
      () => this.#closed,
    );
  }

  /** The storage bundle closes the pool; a trim under way stops at its next batch. */
  /**
   * By the user's tags (one per sealing key: the index events_user), in one transaction; first a sealing
   * pass, so an event an earlier release wrote in the clear is tagged and found.
   */
  async forgetUser(merchantUserId: string): Promise<number> {
    // Again each time (cheap: events_clear is empty once sealed): during a rolling upgrade an instance of
    // the earlier release may still be writing events in the clear.
    if (this.#codec.seals) {
      await this.#sealing;
      await this.#sealClearEvents();
    }
    return this.#db.transaction(async (tx) => {
      const rows = await tx.query<{ id: string; body: string }>(
        'SELECT id, body FROM events WHERE user_tag = ANY($1) FOR UPDATE',
        [this.#codec.userTags(merchantUserId)],
      );
      let rewritten = 0;
      for (const row of rows) {
        const forgotten = forgottenStoredEvent(this.#codec, row.id, row.body, merchantUserId);
        if (!forgotten) continue;
        await this.#rewrite(tx, row.id, forgotten);
        rewritten++;
      }
      return rewritten;
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
