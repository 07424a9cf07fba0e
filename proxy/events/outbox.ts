// The outbox: where merchant events wait for delivery and stay listed for catch-up. Two
// implementations behind this one interface, as for sessions: in memory (one instance; a restart loses
// it) and Redis (shared by every instance; survives restarts and kills). The delivery worker
// (delivery.ts) and the list route only ever talk to this interface.
import type { MerchantEvent } from './shapes.ts';

/**
 * Work the outbox schedules: delivering one event, or looking at one session when its time is up (the
 * session-end check that emits `link.expired`, or re-emits a terminal event whose first emit was lost).
 */
export type OutboxJob = { kind: 'deliver'; eventId: string } | { kind: 'session-check'; sessionId: string };

/** An event with where its delivery stands. */
export interface StoredEvent {
  event: MerchantEvent;
  /** The exact body that is signed and sent (the event as JSON). */
  body: string;
  /** Failed attempts so far. */
  attempts: number;
  status: 'pending' | 'delivered' | 'failed';
}

export interface OutboxBacklog {
  /** Events not yet delivered (nor given up). */
  pending: number;
  /** Epoch ms of the oldest of them; undefined when none. */
  oldestPendingAt: number | undefined;
}

/**
 * Every method rejects with SessionBackendUnavailableError while the backend cannot be reached. Jobs are
 * leased, not taken: a claimed job comes back after `leaseMs` unless it was finished or postponed, so a
 * job whose instance died is done by another.
 */
export interface EventOutbox {
  /**
   * Records `event` (listed from now on, for the retention) and queues its delivery at once. Once per id:
   * resolves false, changing nothing, when an event with this id is already recorded.
   */
  append(event: MerchantEvent, nowMs: number): Promise<boolean>;
  /** Queues a session-end check at `atMs` (once per session: a second call keeps the first). */
  scheduleSessionCheck(sessionId: string, atMs: number): Promise<void>;
  /** Leases up to `max` jobs due at `nowMs` until `nowMs + leaseMs`. */
  claimDue(nowMs: number, leaseMs: number, max: number): Promise<OutboxJob[]>;
  /** The event and its delivery state; undefined when unknown (never recorded, or past the retention). */
  get(eventId: string): Promise<StoredEvent | undefined>;
  /** The delivery of `eventId` is over (`delivered` or `failed`): its job is removed. */
  settle(eventId: string, status: 'delivered' | 'failed'): Promise<void>;
  /** Counts a failed attempt of `eventId` and runs its job again at `atMs`. */
  retryAt(eventId: string, atMs: number): Promise<void>;
  /** Runs a job again at `atMs` (a session check that came too early). */
  postpone(job: OutboxJob, atMs: number): Promise<void>;
  /** Removes a session-check job. */
  finishSessionCheck(sessionId: string): Promise<void>;
  /**
   * Up to `limit` events recorded after `afterId` (from the oldest retained when undefined), oldest
   * first, and whether more follow. Undefined when `afterId` is not a retained event.
   */
  list(afterId: string | undefined, limit: number, nowMs: number): Promise<{ events: MerchantEvent[]; hasMore: boolean } | undefined>;
  backlog(): Promise<OutboxBacklog>;
  /** Forgets events past the retention that are no longer being delivered (the list's head). */
  trim(nowMs: number): Promise<void>;
  close(): Promise<void>;
}

/** A job as one string (the Redis member; the memory map key). */
export function jobKey(job: OutboxJob): string {
  return job.kind === 'deliver' ? `deliver:${job.eventId}` : `session-check:${job.sessionId}`;
}

export function parseJobKey(key: string): OutboxJob | undefined {
  if (key.startsWith('deliver:')) return { kind: 'deliver', eventId: key.slice('deliver:'.length) };
  if (key.startsWith('session-check:')) return { kind: 'session-check', sessionId: key.slice('session-check:'.length) };
  return undefined;
}
