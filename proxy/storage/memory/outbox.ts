// The outbox in memory, for one instance: Maps in insertion order. Synchronous inside, so each method is
// atomic on Node's single thread. A restart loses every event in it, delivered or not (docs/SEVERAL-INSTANCES.md).
import type {
  AttemptOutcome,
  EventDelivery,
  EventOutbox,
  ListQuery,
  OutboxBacklog,
  OutboxJob,
  StoredEvent,
} from '../outbox.ts';
import {
  CLEAR_OUTBOX_CODEC,
  decodeEvent,
  deliverKey,
  encodeEvent,
  forgottenStoredEvent,
  jobKey,
  keeps,
  parseJobKey,
  type OutboxCodec,
} from '../outbox.ts';
import type { MerchantEvent } from '../events.ts';
import { EVENT_RETENTION_MS } from '../../config/limits.ts';

interface Entry {
  id: string;
  /** The body through the codec (sealed), as the other backends store it. */
  stored: string;
  userTag: string | null;
  delivery: EventDelivery;
  createdAtMs: number;
  /** Since when the current delivery has been pending (the backlog's age). */
  pendingSinceMs: number;
}

export class MemoryEventOutbox implements EventOutbox {
  /** Every retained event, in the order recorded (a Map iterates in insertion order). */
  readonly #events = new Map<string, Entry>();
  /** Job key → when it is due (or when its lease ends). */
  readonly #due = new Map<string, number>();
  readonly #retentionMs: number;
  readonly #codec: OutboxCodec;

  constructor(options: { retentionMs?: number; codec?: OutboxCodec } = {}) {
    this.#retentionMs = options.retentionMs ?? EVENT_RETENTION_MS;
    this.#codec = options.codec ?? CLEAR_OUTBOX_CODEC;
  }

  async append(event: MerchantEvent, nowMs: number): Promise<boolean> {
    this.#sweep(nowMs);
    if (this.#events.has(event.id)) return false;
    this.#events.set(event.id, {
      id: event.id,
      ...encodeEvent(this.#codec, event),
      createdAtMs: nowMs,
      pendingSinceMs: nowMs,
      delivery: { state: 'pending', attempts: 0, nextAttemptAt: nowMs },
    });
    this.#due.set(deliverKey(event.id), nowMs);
    return true;
  }

  async scheduleSessionCheck(sessionId: string, atMs: number): Promise<void> {
    const key = jobKey({ kind: 'session-check', sessionId });
    if (!this.#due.has(key)) this.#due.set(key, atMs);
  }

  async claimDue(nowMs: number, leaseMs: number, max: number): Promise<OutboxJob[]> {
    const jobs: OutboxJob[] = [];
    for (const [key, dueAt] of this.#due) {
      if (jobs.length >= max) break;
      if (dueAt > nowMs) continue;
      const job = parseJobKey(key);
      if (!job) continue;
      this.#due.set(key, nowMs + leaseMs);
      jobs.push(job);
    }
    return jobs;
  }

  async get(eventId: string): Promise<StoredEvent | undefined> {
    const entry = this.#events.get(eventId);
    return entry && stored(this.#codec, entry);
  }

  async settle(eventId: string, outcome: AttemptOutcome, nowMs: number): Promise<void> {
    this.#due.delete(deliverKey(eventId));
    const entry = this.#events.get(eventId);
    if (entry?.delivery.state !== 'pending') return;
    const attempts = entry.delivery.attempts + 1;
    entry.delivery = outcome.ok
      ? {
          state: 'delivered',
          attempts,
          deliveredAt: nowMs,
          acknowledgedBy: 'endpoint',
          lastAttemptAt: nowMs,
          ...lastError(entry.delivery),
        }
      : { state: 'failed', attempts, lastAttemptAt: nowMs, lastError: outcome.error };
  }

  async retryAt(eventId: string, error: string, nowMs: number, atMs: number): Promise<void> {
    const entry = this.#events.get(eventId);
    if (entry?.delivery.state !== 'pending') return;
    entry.delivery = {
      state: 'pending',
      attempts: entry.delivery.attempts + 1,
      nextAttemptAt: atMs,
      lastAttemptAt: nowMs,
      lastError: error,
    };
    const key = deliverKey(eventId);
    if (this.#due.has(key)) this.#due.set(key, atMs);
  }

  async postpone(job: OutboxJob, atMs: number): Promise<void> {
    const key = jobKey(job);
    if (this.#due.has(key)) this.#due.set(key, atMs);
  }

  async finishJob(job: OutboxJob): Promise<void> {
    this.#due.delete(jobKey(job));
  }

  async acknowledge(eventId: string, nowMs: number): Promise<StoredEvent | undefined> {
    const entry = this.#events.get(eventId);
    if (!entry) return undefined;
    if (entry.delivery.state !== 'delivered') {
      const { attempts, lastAttemptAt, lastError: error } = entry.delivery;
      entry.delivery = {
        state: 'delivered',
        attempts,
        deliveredAt: nowMs,
        acknowledgedBy: 'api',
        ...defined({ lastAttemptAt, lastError: error }),
      };
      this.#due.delete(deliverKey(eventId));
    }
    return stored(this.#codec, entry);
  }

  async redeliver(eventId: string, nowMs: number): Promise<StoredEvent | undefined> {
    const entry = this.#events.get(eventId);
    if (!entry) return undefined;
    const { delivery } = entry;
    if (delivery.state !== 'pending') {
      entry.delivery = { state: 'pending', attempts: 0, nextAttemptAt: nowMs };
      entry.pendingSinceMs = nowMs;
      this.#due.set(deliverKey(eventId), nowMs);
    } else if (delivery.nextAttemptAt === undefined || delivery.nextAttemptAt > nowMs) {
      delivery.nextAttemptAt = nowMs;
      this.#due.set(deliverKey(eventId), nowMs);
    }
    return stored(this.#codec, entry);
  }

  async list(query: ListQuery, nowMs: number): Promise<{ events: StoredEvent[]; hasMore: boolean } | undefined> {
    this.#sweep(nowMs);
    const { after, limit, delivery } = query;
    if (after !== undefined && !this.#events.has(after)) return undefined;
    const events: StoredEvent[] = [];
    let passed = after === undefined;
    let hasMore = false;
    for (const [id, entry] of this.#events) {
      if (!passed) {
        passed = id === after;
        continue;
      }
      if (!keeps(delivery, entry.delivery.state)) continue;
      if (events.length === limit) {
        hasMore = true;
        break;
      }
      events.push(stored(this.#codec, entry));
    }
    return { events, hasMore };
  }

  async backlog(): Promise<OutboxBacklog> {
    let pending = 0;
    let oldestPendingAt: number | undefined;
    for (const entry of this.#events.values()) {
      if (entry.delivery.state !== 'pending') continue;
      pending++;
      oldestPendingAt = Math.min(oldestPendingAt ?? entry.pendingSinceMs, entry.pendingSinceMs);
    }
    return { pending, oldestPendingAt };
  }

  async trim(nowMs: number): Promise<void> {
    this.#sweep(nowMs);
  }

  async forgetUser(merchantUserId: string): Promise<number> {
    const tags = new Set(this.#codec.userTags(merchantUserId));
    let rewritten = 0;
    for (const entry of this.#events.values()) {
      if (entry.userTag === null || !tags.has(entry.userTag)) continue;
      const forgotten = forgottenStoredEvent(this.#codec, entry.id, entry.stored, merchantUserId);
      if (!forgotten) continue;
      Object.assign(entry, encodeEvent(this.#codec, forgotten));
      rewritten++;
    }
    return rewritten;
  }

  async close(): Promise<void> {
    this.#events.clear();
    this.#due.clear();
  }

  /** Drops events past the retention (the oldest come first) that are no longer being delivered. */
  #sweep(nowMs: number): void {
    for (const [id, entry] of this.#events) {
      if (nowMs - entry.createdAtMs < this.#retentionMs) break;
      if (entry.delivery.state === 'pending') continue;
      this.#events.delete(id);
    }
  }
}

/** A copy: callers never hold the entry itself. */
function stored(codec: OutboxCodec, entry: Entry): StoredEvent {
  return { ...decodeEvent(codec, entry.id, entry.stored), delivery: { ...entry.delivery } };
}

/** The fields of `fields` that are set. */
function defined<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** A delivered event keeps the reason its earlier attempts failed (none when the first went through). */
function lastError(delivery: EventDelivery): Pick<EventDelivery, 'lastError'> {
  return delivery.lastError === undefined ? {} : { lastError: delivery.lastError };
}
