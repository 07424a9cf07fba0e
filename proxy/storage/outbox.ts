// The outbox: where merchant events wait for delivery and stay listed for catch-up. Three implementations
// behind this one interface, as for sessions: in memory (one instance; a restart loses it), SQLite (one
// instance, on disk) and Redis (shared by every instance; survives restarts and kills). The delivery
// worker (delivery.ts) and the list, acknowledge and redeliver calls (event-list.ts) only ever talk to it.
import { MerchantEventSchema, type MerchantEvent } from './events.ts';
import { forgottenEvent, namesUser } from './forgotten.ts';

/**
 * Work the outbox schedules: delivering one event, or looking at one session when its time is up (the
 * session-end check that emits `link.expired`, or re-emits a terminal event whose first emit was lost).
 */
export type OutboxJob = { kind: 'deliver'; eventId: string } | { kind: 'session-check'; sessionId: string };

/** `pending`: being delivered (attempts due); `delivered`: over (a 2xx, or acknowledged); `failed`: given up. */
export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** Which delivery states a list keeps: one state, or `undelivered` (pending and failed). */
export type DeliveryFilter = 'pending' | 'failed' | 'undelivered';

/** Where one event's delivery stands. Times are epoch ms. */
export interface EventDelivery {
  state: DeliveryState;
  /** Attempts made in the current delivery (a redelivery starts again from 0). */
  attempts: number;
  /** `pending`: when the next attempt is due (at or before now while one is due or under way). */
  nextAttemptAt?: number;
  /** `delivered`: when. */
  deliveredAt?: number;
  /** `delivered`: by a 2xx from the endpoint, or acknowledged through the API (`acknowledgeEvent`). */
  acknowledgedBy?: 'endpoint' | 'api';
  /** When the last attempt ended. */
  lastAttemptAt?: number;
  /** The last failed attempt's reason (`answered 500`, `no answer within 10000 ms`, `connection failed (ECONNREFUSED)`). */
  lastError?: string;
}

/** An event with where its delivery stands. */
export interface StoredEvent {
  event: MerchantEvent;
  /** The exact body that is signed and sent (the event as JSON). */
  body: string;
  delivery: EventDelivery;
}

/** What one attempt came to. */
export type AttemptOutcome = { ok: true } | { ok: false; error: string };

export interface OutboxBacklog {
  /** Events not yet delivered (nor given up). */
  pending: number;
  /** Epoch ms since when the oldest of them has been pending; undefined when none. */
  oldestPendingAt: number | undefined;
}

export interface ListQuery {
  /** Only events recorded after this one (its place in the recording order, whatever its state). */
  after?: string;
  limit: number;
  delivery?: DeliveryFilter;
}

/**
 * Every method rejects with SessionBackendUnavailableError while the backend cannot be reached. Jobs are
 * leased, not taken: a claimed job comes back after `leaseMs` unless it was finished or postponed, so a
 * job whose instance died is done by another. Every change of an event's delivery is one atomic step.
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
  /** The event and its delivery; undefined when unknown (never recorded, or past the retention). */
  get(eventId: string): Promise<StoredEvent | undefined>;
  /**
   * The last attempt of a pending event's delivery: `ok` → delivered (by the endpoint), else failed (given
   * up). Counts the attempt and removes its job. Changes nothing else of an event that is not pending (it
   * was acknowledged while the attempt ran).
   */
  settle(eventId: string, outcome: AttemptOutcome, nowMs: number): Promise<void>;
  /** Counts a failed attempt of a pending event and runs its job again at `atMs`; nothing for one that is not pending. */
  retryAt(eventId: string, error: string, nowMs: number, atMs: number): Promise<void>;
  /** Runs a job again at `atMs` (a session check that came too early). */
  postpone(job: OutboxJob, atMs: number): Promise<void>;
  /** Removes a job: a session check that is done, or the delivery of an event that is no longer pending (or gone). */
  finishJob(job: OutboxJob): Promise<void>;
  /**
   * The merchant handled the event: `delivered` (by `api`) and its job removed, so no attempt follows. An
   * event already delivered stays as it is. The event after; undefined when unknown.
   */
  acknowledge(eventId: string, nowMs: number): Promise<StoredEvent | undefined>;
  /**
   * An attempt at `nowMs`: a delivered or failed event starts a new delivery (`pending`, 0 attempts, the
   * retry schedule from the start); a pending one's next attempt moves to now, unless one is already due
   * or under way (then nothing changes). The event after; undefined when unknown.
   */
  redeliver(eventId: string, nowMs: number): Promise<StoredEvent | undefined>;
  /**
   * Up to `limit` events in the order recorded, after `after` (from the oldest retained when undefined),
   * those in the `delivery` states only, and whether more follow. Undefined when `after` is not a
   * retained event. An event past the retention may still be listed until `trim` forgets it (SQLite
   * never deletes while listing: its trim runs on the worker's timer, in small steps).
   */
  list(query: ListQuery, nowMs: number): Promise<{ events: StoredEvent[]; hasMore: boolean } | undefined>;
  backlog(): Promise<OutboxBacklog>;
  /** Forgets events past the retention that are no longer being delivered (the list's head). */
  trim(nowMs: number): Promise<void>;
  /**
   * Rewrites every retained event about `merchantUserId` that `forgottenEvent` (forgotten.ts) changes,
   * whatever its delivery state (same id, place and delivery), and resolves to how many it rewrote.
   * Durable before it resolves.
   */
  forgetUser(merchantUserId: string): Promise<number>;
  close(): Promise<void>;
}

/** Whether `state` is one a list filtered by `filter` keeps. */
export function keeps(filter: DeliveryFilter | undefined, state: DeliveryState): boolean {
  if (filter === undefined) return true;
  return filter === 'undelivered' ? state !== 'delivered' : state === filter;
}

/** A job as one string (the Redis member; the memory map key). */
export function jobKey(job: OutboxJob): string {
  return job.kind === 'deliver' ? `deliver:${job.eventId}` : `session-check:${job.sessionId}`;
}

/** The key of `eventId`'s delivery job. */
export function deliverKey(eventId: string): string {
  return jobKey({ kind: 'deliver', eventId });
}

export function parseJobKey(key: string): OutboxJob | undefined {
  if (key.startsWith('deliver:')) return { kind: 'deliver', eventId: key.slice('deliver:'.length) };
  if (key.startsWith('session-check:')) return { kind: 'session-check', sessionId: key.slice('session-check:'.length) };
  return undefined;
}

/**
 * How an outbox keeps events at rest (issue 39 §5: a body names the merchant's user and may carry a
 * consent record with the shopper's address and user agent, kept 7 days for catch-up). The backends
 * store `seal`'s output and, beside it, `userTag`: a keyed hash they find a user's events by (forgetUser)
 * without reading a body. The proxy builds one from OBV_SEALING_KEYS (sealing/outbox-codec.ts); this
 * layer may not import the sealing, so it is handed in where the storage is made (create-storage.ts).
 */
export interface OutboxCodec {
  /** Whether `seal` seals (false: CLEAR_OUTBOX_CODEC); a backend seals the bodies it finds in the clear only then. */
  readonly seals: boolean;
  /** The body as stored for the event `eventId`, bound to that id. */
  seal(eventId: string, body: string): string;
  /**
   * The body of the event `eventId` from what was stored: a body stored in the clear (written before
   * bodies were sealed) as it is. Throws when it does not open (an unknown key, another event's body).
   */
  open(eventId: string, stored: string): string;
  /** The tags `merchantUserId`'s events may carry: the first is the one `append` writes, the others older keys'. */
  userTags(merchantUserId: string): string[];
}

/** Bodies in the clear and the user id as its own tag: tests and a storage built without sealing keys. */
export const CLEAR_OUTBOX_CODEC: OutboxCodec = {
  seals: false,
  seal: (_eventId, body) => body,
  open: (_eventId, stored) => stored,
  userTags: (merchantUserId) => [merchantUserId],
};

/** Whether a stored body is one written in the clear (JSON) rather than sealed. */
export const isClearBody = (stored: string): boolean => stored.startsWith('{');

/** An event as a backend stores it: the body through the codec, and the tag of the user it names. */
export function encodeEvent(codec: OutboxCodec, event: MerchantEvent): { stored: string; userTag: string | null } {
  const user = event.data.merchantUserId;
  return {
    stored: codec.seal(event.id, JSON.stringify(event)),
    userTag: user === undefined ? null : codec.userTags(user)[0]!,
  };
}

/** The event and its exact body (what is signed and sent) from what a backend stored under `eventId`. */
export function decodeEvent(
  codec: OutboxCodec,
  eventId: string,
  stored: string,
): { event: MerchantEvent; body: string } {
  const body = codec.open(eventId, stored);
  return { event: MerchantEventSchema.parse(JSON.parse(body)) as MerchantEvent, body };
}

/**
 * What forgetting `merchantUserId` (EventOutbox `forgetUser`) makes of the event a backend stored under
 * `eventId`: its rewrite (forgotten.ts `forgottenEvent`), or undefined when it stays as it is (another
 * user's event, or nothing in it to erase).
 */
export function forgottenStoredEvent(
  codec: OutboxCodec,
  eventId: string,
  stored: string,
  merchantUserId: string,
): MerchantEvent | undefined {
  const { event } = decodeEvent(codec, eventId, stored);
  return namesUser(event, merchantUserId) ? forgottenEvent(event) : undefined;
}

/**
 * An event's row in a SQL backend's `events` table (SQLite, PostgreSQL), by its column names. The times
 * are numbers on SQLite and strings on PostgreSQL (its driver hands a bigint over as text), and are read
 * through `Number`.
 */
export interface EventRow {
  id: string;
  body: string;
  attempts: number;
  status: DeliveryState;
  next_attempt_at: number | string | null;
  delivered_at: number | string | null;
  acknowledged_by: 'endpoint' | 'api' | null;
  last_attempt_at: number | string | null;
  last_error: string | null;
}

/** The event and its delivery from its row (`EventRow`). */
export function storedEventOfRow(codec: OutboxCodec, row: EventRow): StoredEvent {
  const delivery: EventDelivery = { state: row.status, attempts: Number(row.attempts) };
  if (row.status === 'pending' && row.next_attempt_at !== null) delivery.nextAttemptAt = Number(row.next_attempt_at);
  if (row.status === 'delivered' && row.delivered_at !== null) delivery.deliveredAt = Number(row.delivered_at);
  if (row.status === 'delivered' && row.acknowledged_by !== null) delivery.acknowledgedBy = row.acknowledged_by;
  if (row.last_attempt_at !== null) delivery.lastAttemptAt = Number(row.last_attempt_at);
  if (row.last_error !== null) delivery.lastError = row.last_error;
  return { ...decodeEvent(codec, row.id, row.body), delivery };
}
