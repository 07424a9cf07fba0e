// The outbox in memory, for one instance: Maps in insertion order. Synchronous inside, so each method is
// atomic on Node's single thread. A restart loses every event in it, delivered or not (docs/SEVERAL-INSTANCES.md).
import type { EventOutbox, OutboxBacklog, OutboxJob, StoredEvent } from './outbox.ts';
import { jobKey, parseJobKey } from './outbox.ts';
import type { MerchantEvent } from './shapes.ts';
import { EVENT_RETENTION_MS } from '../config/limits.ts';

interface Entry extends StoredEvent {
  createdAtMs: number;
}

export class MemoryEventOutbox implements EventOutbox {
  /** Every retained event, in the order recorded (a Map iterates in insertion order). */
  readonly #events = new Map<string, Entry>();
  /** Job key → when it is due (or when its lease ends). */
  readonly #due = new Map<string, number>();
  readonly #retentionMs: number;

  constructor(options: { retentionMs?: number } = {}) {
    this.#retentionMs = options.retentionMs ?? EVENT_RETENTION_MS;
  }

  async append(event: MerchantEvent, nowMs: number): Promise<boolean> {
    this.#sweep(nowMs);
    if (this.#events.has(event.id)) return false;
    this.#events.set(event.id, { event, body: JSON.stringify(event), attempts: 0, status: 'pending', createdAtMs: nowMs });
    this.#due.set(jobKey({ kind: 'deliver', eventId: event.id }), nowMs);
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
    return entry && { event: entry.event, body: entry.body, attempts: entry.attempts, status: entry.status };
  }

  async settle(eventId: string, status: 'delivered' | 'failed'): Promise<void> {
    const entry = this.#events.get(eventId);
    if (entry) entry.status = status;
    this.#due.delete(jobKey({ kind: 'deliver', eventId }));
  }

  async retryAt(eventId: string, atMs: number): Promise<void> {
    const entry = this.#events.get(eventId);
    if (entry) entry.attempts++;
    const key = jobKey({ kind: 'deliver', eventId });
    if (this.#due.has(key)) this.#due.set(key, atMs);
  }

  async postpone(job: OutboxJob, atMs: number): Promise<void> {
    const key = jobKey(job);
    if (this.#due.has(key)) this.#due.set(key, atMs);
  }

  async finishSessionCheck(sessionId: string): Promise<void> {
    this.#due.delete(jobKey({ kind: 'session-check', sessionId }));
  }

  async list(afterId: string | undefined, limit: number, nowMs: number): Promise<{ events: MerchantEvent[]; hasMore: boolean } | undefined> {
    this.#sweep(nowMs);
    if (afterId !== undefined && !this.#events.has(afterId)) return undefined;
    const events: MerchantEvent[] = [];
    let passed = afterId === undefined;
    let hasMore = false;
    for (const [id, entry] of this.#events) {
      if (!passed) {
        passed = id === afterId;
        continue;
      }
      if (events.length === limit) {
        hasMore = true;
        break;
      }
      events.push(entry.event);
    }
    return { events, hasMore };
  }

  async backlog(): Promise<OutboxBacklog> {
    let pending = 0;
    let oldestPendingAt: number | undefined;
    for (const entry of this.#events.values()) {
      if (entry.status !== 'pending') continue;
      pending++;
      oldestPendingAt = Math.min(oldestPendingAt ?? entry.createdAtMs, entry.createdAtMs);
    }
    return { pending, oldestPendingAt };
  }

  async trim(nowMs: number): Promise<void> {
    this.#sweep(nowMs);
  }

  async close(): Promise<void> {
    this.#events.clear();
    this.#due.clear();
  }

  /** Drops events past the retention (the oldest come first) that are no longer being delivered. */
  #sweep(nowMs: number): void {
    for (const [id, entry] of this.#events) {
      if (nowMs - entry.createdAtMs < this.#retentionMs) break;
      if (entry.status === 'pending') continue;
      this.#events.delete(id);
    }
  }
}
