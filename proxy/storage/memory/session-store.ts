// SessionStore for one instance: plain Maps, swept on a timer. Everything is synchronous inside, so
// "atomic" operations (settle, claim) are atomic for free on Node's single thread.
import type { SessionRecord, SessionStore, SettleResult, StoredOutcome } from '../sessions.ts';
import { TERMINAL_STATES } from '../sessions.ts';
import { MEMORY_SWEEP_INTERVAL_MS, RECORD_GRACE_MS } from '../../config/limits.ts';

export interface MemorySessionStoreOptions {
  /** How long a record is kept after it expires, so GET still answers `expired` instead of 404. Default 1 h. */
  graceMs?: number;
  /** Sweep period. Default 60 s. */
  sweepIntervalMs?: number;
  now?: () => number;
}

/**
 * A copy the caller cannot use to change the stored record. Records are flat apart from `outcome`, whose
 * fields are strings, so two spreads give what structuredClone gave at a fraction of its cost (the clones
 * were most of the store's time per notification).
 */
function copyRecord(record: SessionRecord): SessionRecord {
  const copy = { ...record };
  if (record.outcome) copy.outcome = { ...record.outcome };
  return copy;
}

type IdempotencyEntry =
  | { state: 'in-flight'; expiresAt: number; waiters: ((sessionId: string | undefined) => void)[] }
  | { state: 'done'; expiresAt: number; sessionId: string };

/** In-memory SessionStore; the default backend. */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, SessionRecord>();
  readonly #byRef = new Map<string, string>();
  readonly #idempotency = new Map<string, IdempotencyEntry>();
  readonly #marks = new Map<string, { value: string; expiresAt: number }>();
  readonly #graceMs: number;
  readonly #now: () => number;
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: MemorySessionStoreOptions = {}) {
    this.#graceMs = options.graceMs ?? RECORD_GRACE_MS;
    this.#now = options.now ?? Date.now;
    this.#sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? MEMORY_SWEEP_INTERVAL_MS);
    this.#sweeper.unref();
  }

  async create(record: SessionRecord): Promise<void> {
    if (this.#sessions.has(record.sessionId)) throw new Error('session id already exists');
    this.#sessions.set(record.sessionId, copyRecord(record));
    this.#byRef.set(record.notificationRef, record.sessionId);
  }

  async get(sessionId: string): Promise<SessionRecord | undefined> {
    const record = this.#live(sessionId);
    return record && copyRecord(record);
  }

  async getByNotificationRef(ref: string): Promise<SessionRecord | undefined> {
    const sessionId = this.#byRef.get(ref);
    return sessionId === undefined ? undefined : this.get(sessionId);
  }

  async settle(sessionId: string, outcome: StoredOutcome): Promise<SettleResult> {
    const record = this.#live(sessionId);
    if (!record) throw new Error('unknown session');
    if (TERMINAL_STATES.has(record.state)) return { stored: false, record: copyRecord(record) };
    record.outcome = { ...outcome };
    record.state = outcome.status === 'success' ? 'succeeded' : 'failed';
    return { stored: true, record: copyRecord(record) };
  }

  async markReturned(sessionId: string): Promise<SessionRecord | undefined> {
    const record = this.#live(sessionId);
    if (record?.state === 'pending') record.state = 'returned';
    return record && copyRecord(record);
  }

  async forgetUser(merchantUserId: string): Promise<SessionRecord[]> {
    const forgotten: SessionRecord[] = [];
    for (const [id, record] of this.#sessions) {
      if (record.merchantUserId !== merchantUserId) continue;
      this.#sessions.delete(id);
      this.#byRef.delete(record.notificationRef);
      forgotten.push(record);
    }
    return forgotten;
  }

  async claimIdempotencyKey(
    key: string,
    ttlMs: number,
  ): Promise<{ claimed: true } | { claimed: false; sessionId?: string }> {
    const entry = this.#idempotency.get(key);
    if (!entry || entry.expiresAt <= this.#now()) {
      this.#idempotency.set(key, { state: 'in-flight', expiresAt: this.#now() + ttlMs, waiters: [] });
      return { claimed: true };
    }
    if (entry.state === 'done') return { claimed: false, sessionId: entry.sessionId };
    const sessionId = await new Promise<string | undefined>((resolve) => entry.waiters.push(resolve));
    return sessionId === undefined ? { claimed: false } : { claimed: false, sessionId };
  }

  async completeIdempotencyKey(key: string, sessionId: string, ttlMs: number): Promise<void> {
    const entry = this.#idempotency.get(key);
    this.#idempotency.set(key, { state: 'done', sessionId, expiresAt: this.#now() + ttlMs });
    if (entry?.state === 'in-flight') for (const wake of entry.waiters) wake(sessionId);
  }

  async releaseIdempotencyKey(key: string): Promise<void> {
    const entry = this.#idempotency.get(key);
    this.#idempotency.delete(key);
    if (entry?.state === 'in-flight') for (const wake of entry.waiters) wake(undefined);
  }

  async mark(key: string, value: string, ttlMs: number): Promise<string> {
    const held = await this.readMark(key);
    if (held !== undefined) return held;
    this.#marks.set(key, { value, expiresAt: this.#now() + ttlMs });
    return value;
  }

  async readMark(key: string): Promise<string | undefined> {
    const entry = this.#marks.get(key);
    return entry && entry.expiresAt > this.#now() ? entry.value : undefined;
  }

  async unmark(key: string): Promise<void> {
    this.#marks.delete(key);
  }

  /** Drops records past their retention and stale keys. Runs on a timer; public for tests. */
  sweep(): void {
    const now = this.#now();
    for (const [id, record] of this.#sessions) {
      if (record.expiresAt + this.#graceMs <= now) {
        this.#sessions.delete(id);
        this.#byRef.delete(record.notificationRef);
      }
    }
    for (const [key, entry] of this.#idempotency) {
      // An in-flight claim has waiters; it ends with complete/release, never by sweeping.
      if (entry.state === 'done' && entry.expiresAt <= now) this.#idempotency.delete(key);
    }
    for (const [key, entry] of this.#marks) if (entry.expiresAt <= now) this.#marks.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
  }

  /** The stored record with `expired` applied (in place: expiry is final once reached). */
  #live(sessionId: string): SessionRecord | undefined {
    const record = this.#sessions.get(sessionId);
    if (record && !TERMINAL_STATES.has(record.state) && record.expiresAt <= this.#now()) record.state = 'expired';
    return record;
  }
}
