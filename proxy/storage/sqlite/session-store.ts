// SessionStore on SQLite, for one instance: sessions, their idempotency claims and their one-time
// markers in the data directory's file, so a restart or a crash loses no shopper who was at the bank.
// Each read-modify-write is one synchronous statement or transaction, atomic on Node's single thread.
// A stored outcome is an acknowledgement (the provider's notification is answered, the page told), so
// `settle` resolves only once it survives a power loss (the handle's `synced()`, database.ts), and reads
// show it only from then on; the rest (a new session, its idempotency claim, markers) acknowledges
// nothing and never waits for an fsync: a power loss may take back the last moments' starts, whose
// shoppers start again.
import type { SessionRecord, SessionStore, SettleResult, StoredOutcome } from '../sessions.ts';
import type { SqliteEventOutbox } from './outbox.ts';
import type { MarkerWrite, OutcomeWrite, OutcomeWriter, OutcomeWriteResult } from '../outcome-write.ts';
import { TERMINAL_STATES } from '../sessions.ts';
import { decodeSession, sessionRow, stateForOutcome } from '../session-codec.ts';
import type { SqliteHandle } from './database.ts';
import { prepare } from './driver.ts';

interface SessionRow {
  base: string;
  state: string;
  outcome: string | null;
}

/** The claims whose start has not answered yet (no session): what the open clears. */
export const IN_FLIGHT_CLAIMS = 'session_id IS NULL';

type Claim = { claimed: true } | { claimed: false; sessionId?: string };

/** A settle's statement: the row before it, and the row it wrote (undefined when it stored nothing). */
interface Settled {
  before: SessionRow | undefined;
  settled: SessionRow | undefined;
}

/** Where a notification's event is recorded, inside its transaction and hidden until durable (outbox.ts). */
export type HiddenEvents = Pick<SqliteEventOutbox, 'record' | 'hide' | 'reveal'>;

export class SqliteSessionStore implements SessionStore, OutcomeWriter {
  readonly #now: () => number;
  /** Sessions whose outcome is committed but not yet durable, as reads see them meanwhile (settle). */
  readonly #unsynced = new Map<string, SessionRow>();
  /** Duplicates waiting for a start of this process to complete or release its claim. */
  readonly #waiters = new Map<string, ((sessionId: string | undefined) => void)[]>();
  readonly #statements;
  readonly #events: HiddenEvents | undefined;

  constructor(
    readonly handle: SqliteHandle,
    options: { now?: () => number; events?: HiddenEvents } = {},
  ) {
    this.#now = options.now ?? Date.now;
    this.#events = options.events;
    const { db } = handle;
    // A claim still in flight when the file was last closed belonged to a process that is gone (one
    // instance per file): its start never answered, so a retry may claim the key again at once.
    // Through the partial index idempotency_claims_in_flight (database.ts): a file's size costs it nothing.
    prepare(db, `DELETE FROM idempotency_claims WHERE ${IN_FLIGHT_CLAIMS}`).run();
    this.#statements = {
      insert: prepare(
        db,
        'INSERT INTO sessions (session_id, notification_ref, base, state, outcome, expires_at, purge_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      get: prepare<[string], SessionRow>(db, 'SELECT base, state, outcome FROM sessions WHERE session_id = ?'),
      byRef: prepare<[string], SessionRow & { session_id: string }>(
        db,
        'SELECT session_id, base, state, outcome FROM sessions WHERE notification_ref = ?',
      ),
      settle: prepare<[string, string, string, number], SessionRow>(
        db,
        `UPDATE sessions SET state = ?, outcome = ? WHERE session_id = ?
        AND state NOT IN ('succeeded', 'failed', 'expired') AND expires_at > ? RETURNING base, state, outcome`,
      ),
      // A scan of the table (no index on the user): an erasure is rare, and the table holds hours of sessions.
      forgetUser: prepare<[string], SessionRow & { session_id: string }>(
        db,
        "DELETE FROM sessions WHERE json_extract(base, '$.merchantUserId') = ? RETURNING session_id, base, state, outcome",
      ),
      markReturned: prepare(
        db,
        "UPDATE sessions SET state = 'returned' WHERE session_id = ? AND state = 'pending' AND expires_at > ?",
      ),
      readClaim: prepare<[string, number], { session_id: string | null }>(
        db,
        'SELECT session_id FROM idempotency_claims WHERE key = ? AND purge_at > ?',
      ),
      putClaim: prepare(
        db,
        'INSERT OR REPLACE INTO idempotency_claims (key, session_id, lease_until, purge_at) VALUES (?, ?, ?, ?)',
      ),
      releaseClaim: prepare(db, 'DELETE FROM idempotency_claims WHERE key = ? AND session_id IS NULL'),
      readMark: prepare<[string, number], { value: string }>(
        db,
        'SELECT value FROM markers WHERE key = ? AND purge_at > ?',
      ),
      // One statement in the usual case: set unless a live marker holds the key (an expired one is replaced).
      markIfFree: prepare(
        db,
        `INSERT INTO markers (key, value, purge_at) VALUES (?, ?, ?)
        ON CONFLICT (key) DO UPDATE SET value = excluded.value, purge_at = excluded.purge_at WHERE markers.purge_at <= ?`,
      ),
      deleteMark: prepare(db, 'DELETE FROM markers WHERE key = ?'),
    };
  }

  async create(record: SessionRecord): Promise<void> {
    this.#statements.insert.run(...sessionRow(record));
  }

  async get(sessionId: string): Promise<SessionRecord | undefined> {
    const row = this.#unsynced.get(sessionId) ?? this.#statements.get.get(sessionId);
    return row && this.#decode(row);
  }

  async getByNotificationRef(ref: string): Promise<SessionRecord | undefined> {
    // One statement, not the reference's then the session's: a notification's first read (issue 40).
    const found = this.#statements.byRef.get(ref);
    if (!found) return undefined;
    return this.#decode(this.#unsynced.get(found.session_id) ?? found);
  }

  async settle(sessionId: string, outcome: StoredOutcome): Promise<SettleResult> {
    const settling = this.#settleSync(sessionId, outcome);
    this.#holdUntilDurable(sessionId, settling);
    return this.#afterCommit(sessionId, settling);
  }

  /** The session as it was and, when the outcome was stored, as it is now (committed, not yet durable). */
  #settleSync(sessionId: string, outcome: StoredOutcome): Settled {
    const before = this.#statements.get.get(sessionId);
    const settled = this.#statements.settle.get(
      stateForOutcome(outcome),
      JSON.stringify(outcome),
      sessionId,
      this.#now(),
    );
    return { before, settled };
  }

  /**
   * Until a settle's fsync completes, reads see the session as it was: no page or merchant server is shown
   * an outcome a power loss could take back, and the caller writes what goes with the outcome (its link
   * reference's marker) before any read can show it. (A failed fsync leaves it, and its event, unseen
   * until a restart.) Called at once after the COMMIT, before anything else runs.
   */
  #holdUntilDurable(sessionId: string, { before, settled }: Settled): void {
    if (settled && before) this.#unsynced.set(sessionId, before);
  }

  /**
   * What follows a settle's commit (and `#holdUntilDurable`), in `settle` and in `recordOutcome`: the
   * answer once the commit is durable, and then only, the event this caller hid (`eventId`) shown too.
   */
  async #afterCommit(sessionId: string, { settled }: Settled, eventId?: string): Promise<SettleResult> {
    // Also when nothing was stored: the outcome this answer reports may be another call's commit whose
    // fsync is still under way.
    await this.handle.synced();
    if (eventId !== undefined) this.#events?.reveal(eventId);
    if (settled) {
      this.#unsynced.delete(sessionId);
      return { stored: true, record: this.#decode(settled) };
    }
    // Every commit made before this call is durable now, the outcome stored by another call included.
    const row = this.#statements.get.get(sessionId);
    if (!row) throw new Error('unknown session');
    return { stored: false, record: this.#decode(row) };
  }

  /**
   * A notification's writes in ONE transaction and one durable wait (issue 40): before, each marker, the
   * settle and the event's append was its own commit, and the settle and the append each waited for an
   * fsync in turn. Any statement that throws rolls back all of them (the provider's retry starts afresh),
   * and none of another notification's: the notifications that arrive together commit together
   * (write-batch.ts), but one that fails is run again alone.
   */
  async recordOutcome(write: OutcomeWrite): Promise<OutcomeWriteResult> {
    this.handle.assertDurable();
    const { sessionId, nowMs } = write;
    const event = write.ifStored?.event;
    if (event && !this.#events) throw new Error('this session store records no events (no outbox given)');
    // The database only: the step runs again from scratch if its group rolls back (write-batch.ts), and
    // every statement reads what it decides on. What memory holds follows the COMMIT that kept it: the
    // session's row as reads see it meanwhile, and the event this call recorded, hidden until durable.
    const written = await this.handle.batched(
      (): (Settled & { recorded: boolean }) | undefined => {
        if (this.#markSync(write.webhook, nowMs) !== write.webhook.value) return undefined;
        for (const marker of write.markers) this.#markSync(marker, nowMs);
        const settling = this.#settleSync(sessionId, write.outcome);
        let recorded = false;
        if (settling.settled) {
          for (const marker of write.ifStored?.markers ?? []) this.#markSync(marker, nowMs);
          if (event) recorded = this.#events!.record(event, nowMs);
        }
        return { ...settling, recorded };
      },
      (committed) => {
        if (!committed) return;
        this.#holdUntilDurable(sessionId, committed);
        if (committed.recorded) this.#events!.hide(event!.id);
      },
    );
    // The webhook-id's marker held another session: nothing was written, nothing to wait for.
    if (!written) return { conflict: true };
    return this.#afterCommit(sessionId, written, written.recorded ? event!.id : undefined);
  }

  /** `mark` without its durability check, for a caller's transaction: the value the marker holds after. */
  #markSync({ key, value, ttlMs }: MarkerWrite, now: number): string {
    if (this.#statements.markIfFree.run(key, value, now + ttlMs, now).changes === 1) return value;
    return this.#statements.readMark.get(key, now)?.value ?? value;
  }

  async markReturned(sessionId: string): Promise<SessionRecord | undefined> {
    this.#statements.markReturned.run(sessionId, this.#now());
    return this.get(sessionId);
  }

  async claimIdempotencyKey(key: string, ttlMs: number): Promise<Claim> {
    const held = this.#statements.readClaim.get(key, this.#now());
    if (held?.session_id) return { claimed: false, sessionId: held.session_id };
    const waiting = this.#waiters.get(key);
    if (held && waiting) {
      const sessionId = await new Promise<string | undefined>((resolve) => waiting.push(resolve));
      return sessionId === undefined ? { claimed: false } : { claimed: false, sessionId };
    }
    const now = this.#now();
    this.#statements.putClaim.run(key, null, now + ttlMs, now + ttlMs);
    this.#waiters.set(key, []);
    return { claimed: true };
  }

  async completeIdempotencyKey(key: string, sessionId: string, ttlMs: number): Promise<void> {
    this.#statements.putClaim.run(key, sessionId, null, this.#now() + ttlMs);
    this.#wake(key, sessionId);
  }

  async releaseIdempotencyKey(key: string): Promise<void> {
    this.#statements.releaseClaim.run(key);
    this.#wake(key, undefined);
  }

  async mark(key: string, value: string, ttlMs: number): Promise<string> {
    // A marker acknowledges nothing, but it is /readyz's write probe: after a failed fsync nothing more
    // is acknowledged, so the instance must not read as ready either.
    this.handle.assertDurable();
    const now = this.#now();
    if (this.#statements.markIfFree.run(key, value, now + ttlMs, now).changes === 1) return value;
    return this.#statements.readMark.get(key, now)?.value ?? value;
  }

  async readMark(key: string): Promise<string | undefined> {
    return this.#statements.readMark.get(key, this.#now())?.value;
  }

  async unmark(key: string): Promise<void> {
    this.#statements.deleteMark.run(key);
  }

  /** The storage bundle closes the file (storage/sqlite/storage.ts). */
  async forgetUser(merchantUserId: string): Promise<SessionRecord[]> {
    const rows = this.#statements.forgetUser.all(merchantUserId);
    for (const row of rows) this.#unsynced.delete(row.session_id);
    await this.handle.synced();
    return rows.map((row) => decodeSession(row.base, row.state, row.outcome));
  }

  async close(): Promise<void> {
    for (const key of [...this.#waiters.keys()]) this.#wake(key, undefined);
  }

  #wake(key: string, sessionId: string | undefined): void {
    const waiting = this.#waiters.get(key);
    this.#waiters.delete(key);
    for (const wake of waiting ?? []) wake(sessionId);
  }

  /** A row as a record (parsed: the file may hold what an older version wrote), with expiry applied. */
  #decode(row: SessionRow): SessionRecord {
    return this.#withExpiry(decodeSession(row.base, row.state, row.outcome));
  }

  #withExpiry(record: SessionRecord): SessionRecord {
    if (!TERMINAL_STATES.has(record.state) && this.#now() >= record.expiresAt) return { ...record, state: 'expired' };
    return record;
  }
}
