// Sessions on PostgreSQL, shared by every instance: the record, its outcome (the token sealed), its
// idempotency claims and its one-time markers. Each change is one statement, atomic across instances
// (the first terminal outcome wins by the UPDATE's own condition), and durable once it resolves (the
// server's commit: database.ts). A start's idempotency claim is a lease, as on Redis: the instance that
// claimed renews it while its start runs, so a start whose instance died frees its key within seconds,
// and a duplicate on any instance waits (polling) for the first start's session.
import type { SessionRecord, SessionStore, SettleResult, StoredOutcome } from '../sessions.ts';
import { TERMINAL_STATES } from '../sessions.ts';
import { decodeSession, sessionRow, stateForOutcome } from '../session-codec.ts';
import type { Database, Tx } from './database.ts';
import type { MerchantEvent } from '../events.ts';
import type { MarkerWrite, OutcomeWrite, OutcomeWriter, OutcomeWriteResult } from '../outcome-write.ts';

/** Records a merchant event on the caller's transaction (outbox.ts `record`). */
export type RecordEvent = (tx: Tx, event: MerchantEvent, nowMs: number) => Promise<boolean>;

interface SessionRow {
  base: string;
  state: string;
  outcome: string | null;
}

type Claim = { claimed: true } | { claimed: false; sessionId?: string };

/** How long a duplicate start waits for the first one before answering that it is still in progress. */
const IDEMPOTENCY_WAIT_MS = 30_000;
/** A start's claim lives this long unless its instance renews it (every third of it) while the start runs. */
const PENDING_CLAIM_TTL_MS = 3_000;

export class PostgresSessionStore implements SessionStore, OutcomeWriter {
  readonly #db: Database;
  readonly #now: () => number;
  /** Claims this instance holds while their start runs, renewed until completed or released. */
  readonly #renewals = new Map<string, NodeJS.Timeout>();

  readonly #recordEvent: RecordEvent | undefined;

  constructor(db: Database, options: { now?: (() => number) | undefined; recordEvent?: RecordEvent } = {}) {
    this.#db = db;
    this.#now = options.now ?? Date.now;
    this.#recordEvent = options.recordEvent;
  }

  /** @throws Error when the session id or its notification reference already exists. */
  async create(record: SessionRecord): Promise<void> {
    await this.#db.query(
      'INSERT INTO sessions (session_id, notification_ref, base, state, outcome, expires_at, purge_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      sessionRow(record),
    );
  }

  async get(sessionId: string): Promise<SessionRecord | undefined> {
    const [row] = await this.#db.query<SessionRow>(
      'SELECT base, state, outcome FROM sessions WHERE session_id = $1 AND purge_at > $2',
      [sessionId, this.#now()],
    );
    return row && this.#decode(row);
  }

  async getByNotificationRef(ref: string): Promise<SessionRecord | undefined> {
    // One round trip, not the reference's then the session's.
    const [row] = await this.#db.query<SessionRow>(
      'SELECT base, state, outcome FROM sessions WHERE notification_ref = $1 AND purge_at > $2',
      [ref, this.#now()],
    );
    return row && this.#decode(row);
  }

  /**
   * Stores the first terminal outcome, atomically across instances: the UPDATE's condition is checked on
   * the row as it is when the statement locks it, so of two instances settling at once one changes it
   * and the other finds it settled.
   * @throws Error for an unknown session (never created, or past its record's grace).
   */
  async settle(sessionId: string, outcome: StoredOutcome): Promise<SettleResult> {
    const now = this.#now();
    const [settled] = await this.#db.query<SessionRow>(
      `UPDATE sessions SET state = $1, outcome = $2 WHERE session_id = $3
      AND state NOT IN ('succeeded', 'failed', 'expired') AND expires_at > $4 AND purge_at > $4 RETURNING base, state, outcome`,
      [stateForOutcome(outcome), JSON.stringify(outcome), sessionId, now],
    );
    if (settled) return { stored: true, record: this.#decode(settled) };
    const [row] = await this.#db.query<SessionRow>(
      'SELECT base, state, outcome FROM sessions WHERE session_id = $1 AND purge_at > $2',
      [sessionId, now],
    );
    if (!row) throw new Error(`unknown session ${sessionId}`);
    return { stored: false, record: this.#decode(row) };
  }

  /**
   * A notification's writes in ONE transaction, one commit (issue 40): before, each marker, the settle and
   * the event was its own statement and its own commit (each a WAL flush on the server). The markers go in
   * one statement; a webhook-id held by another session rolls everything back (`conflict`).
   */
  async recordOutcome(write: OutcomeWrite): Promise<OutcomeWriteResult> {
    const now = this.#now();
    const { sessionId } = write;
    return this.#db.transaction<OutcomeWriteResult>(
      async (tx) => {
        const set = await markAll(tx, [write.webhook, ...write.markers], now);
        const holder = set.get(write.webhook.key) ?? (await readMarkOn(tx, write.webhook.key, now));
        if (holder !== undefined && holder !== write.webhook.value) return { conflict: true };
        const [settled] = await tx.query<SessionRow>(
          `UPDATE sessions SET state = $1, outcome = $2 WHERE session_id = $3
          AND state NOT IN ('succeeded', 'failed', 'expired') AND expires_at > $4 AND purge_at > $4 RETURNING base, state, outcome`,
          [stateForOutcome(write.outcome), JSON.stringify(write.outcome), sessionId, now],
        );
        if (!settled) {
          const [row] = await tx.query<SessionRow>(
            'SELECT base, state, outcome FROM sessions WHERE session_id = $1 AND purge_at > $2',
            [sessionId, now],
          );
          if (!row) throw new Error(`unknown session ${sessionId}`);
          return { stored: false, record: this.#decode(row) };
        }
        const markers = write.ifStored?.markers ?? [];
        if (markers.length > 0) await markAll(tx, markers, now);
        const event = write.ifStored?.event;
        if (event) {
          if (!this.#recordEvent) throw new Error('this session store records no events (no outbox given)');
          await this.#recordEvent(tx, event, write.nowMs);
        }
        return { stored: true, record: this.#decode(settled) };
      },
      { commitIf: (result) => !result.conflict },
    );
  }

  /** A scan of the table (no index on the user): an erasure is rare, and the table holds hours of sessions. */
  async forgetUser(merchantUserId: string): Promise<SessionRecord[]> {
    const rows = await this.#db.query<{ base: string; state: string; outcome: string | null }>(
      "DELETE FROM sessions WHERE base::jsonb ->> 'merchantUserId' = $1 RETURNING base, state, outcome",
      [merchantUserId],
    );
    return rows.map((row) => decodeSession(row.base, row.state, row.outcome));
  }

  async markReturned(sessionId: string): Promise<SessionRecord | undefined> {
    const now = this.#now();
    const [changed] = await this.#db.query<SessionRow>(
      `UPDATE sessions SET state = 'returned' WHERE session_id = $1 AND state = 'pending'
      AND expires_at > $2 RETURNING base, state, outcome`,
      [sessionId, now],
    );
    return changed ? this.#decode(changed) : this.get(sessionId);
  }

  /**
   * Claims `key` with a pending lease (a new row, or one whose lease or life ended). A duplicate polls
   * until the first start completes (→ its sessionId) or is released or its lease ends (→ no sessionId),
   * for at most IDEMPOTENCY_WAIT_MS (then also no sessionId: the caller answers that the first request
   * is still in progress).
   */
  async claimIdempotencyKey(key: string, ttlMs: number): Promise<Claim> {
    const now = this.#now();
    const leaseMs = Math.min(ttlMs, PENDING_CLAIM_TTL_MS);
    const claimed = await this.#db.query(
      `INSERT INTO idempotency_claims (key, session_id, lease_until, purge_at) VALUES ($1, NULL, $2, $3)
      ON CONFLICT (key) DO UPDATE SET session_id = NULL, lease_until = excluded.lease_until, purge_at = excluded.purge_at
      WHERE idempotency_claims.purge_at <= $4 OR (idempotency_claims.session_id IS NULL AND idempotency_claims.lease_until <= $4)
      RETURNING key`,
      [key, now + leaseMs, now + ttlMs, now],
    );
    if (claimed.length === 1) {
      this.#renew(key, leaseMs);
      return { claimed: true };
    }
    const deadline = now + IDEMPOTENCY_WAIT_MS;
    for (let delay = 25; ; delay = Math.min(delay * 2, 250)) {
      const at = this.#now();
      const [row] = await this.#db.query<{ session_id: string | null; lease_until: string | null }>(
        'SELECT session_id, lease_until FROM idempotency_claims WHERE key = $1 AND purge_at > $2',
        [key, at],
      );
      if (row?.session_id) return { claimed: false, sessionId: row.session_id };
      if (!row || Number(row.lease_until) <= at || at >= deadline) return { claimed: false };
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  async completeIdempotencyKey(key: string, sessionId: string, ttlMs: number): Promise<void> {
    this.#stopRenewing(key);
    const now = this.#now();
    await this.#db.query(
      `INSERT INTO idempotency_claims (key, session_id, lease_until, purge_at) VALUES ($1, $2, NULL, $3)
      ON CONFLICT (key) DO UPDATE SET session_id = excluded.session_id, lease_until = NULL, purge_at = excluded.purge_at`,
      [key, sessionId, now + ttlMs],
    );
  }

  async releaseIdempotencyKey(key: string): Promise<void> {
    // Only a pending claim is released: a completed key keeps answering duplicates until its TTL.
    this.#stopRenewing(key);
    await this.#db.query('DELETE FROM idempotency_claims WHERE key = $1 AND session_id IS NULL', [key]);
  }

  async mark(key: string, value: string, ttlMs: number): Promise<string> {
    const now = this.#now();
    // One statement in the usual case: set unless a live marker holds the key (an expired one is replaced).
    const [set] = await this.#db.query<{ value: string }>(
      `INSERT INTO markers (key, value, purge_at) VALUES ($1, $2, $3)
      ON CONFLICT (key) DO UPDATE SET value = excluded.value, purge_at = excluded.purge_at WHERE markers.purge_at <= $4
      RETURNING value`,
      [key, value, now + Math.max(1, Math.ceil(ttlMs)), now],
    );
    if (set) return set.value;
    return (await this.readMark(key)) ?? value;
  }

  async readMark(key: string): Promise<string | undefined> {
    const [row] = await this.#db.query<{ value: string }>(
      'SELECT value FROM markers WHERE key = $1 AND purge_at > $2',
      [key, this.#now()],
    );
    return row?.value;
  }

  async unmark(key: string): Promise<void> {
    await this.#db.query('DELETE FROM markers WHERE key = $1', [key]);
  }

  /** The storage bundle closes the pool (storage.ts). */
  async close(): Promise<void> {
    for (const key of [...this.#renewals.keys()]) this.#stopRenewing(key);
  }

  /** Keeps this instance's pending claim alive while its start runs. */
  #renew(key: string, leaseMs: number): void {
    const timer = setInterval(
      () => {
        const now = this.#now();
        this.#db
          .query('UPDATE idempotency_claims SET lease_until = $2 WHERE key = $1 AND session_id IS NULL', [
            key,
            now + leaseMs,
          ])
          .catch(() => undefined);
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
    timer.unref();
    this.#renewals.set(key, timer);
  }

  #stopRenewing(key: string): void {
    clearInterval(this.#renewals.get(key));
    this.#renewals.delete(key);
  }

  /** A row as a record (parsed: another instance, maybe of another release, wrote it), with expiry applied. */
  #decode(row: SessionRow): SessionRecord {
    const record = decodeSession(row.base, row.state, row.outcome);
    if (!TERMINAL_STATES.has(record.state) && this.#now() >= record.expiresAt) return { ...record, state: 'expired' };
    return record;
  }
}

/**
 * `mark` for several markers in one statement: each set unless a live marker holds its key. The values it
 * set, by key (a key missing is held by a live marker: read it after, as `mark` does).
 */
async function markAll(tx: Tx, markers: MarkerWrite[], now: number): Promise<Map<string, string>> {
  const rows = await tx.query<{ key: string; value: string }>(
    `INSERT INTO markers (key, value, purge_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, purge_at = excluded.purge_at WHERE markers.purge_at <= $4
    RETURNING key, value`,
    [
      markers.map((marker) => marker.key),
      markers.map((marker) => marker.value),
      markers.map((marker) => now + Math.max(1, Math.ceil(marker.ttlMs))),
      now,
    ],
  );
  return new Map(rows.map((row) => [row.key, row.value]));
}

async function readMarkOn(tx: Tx, key: string, now: number): Promise<string | undefined> {
  const [row] = await tx.query<{ value: string }>('SELECT value FROM markers WHERE key = $1 AND purge_at > $2', [
    key,
    now,
  ]);
  return row?.value;
}
