// ResultBus on PostgreSQL, without Redis: a result stored by any instance reaches the browser whose socket
// is held by any other, through three paths, each covering the next one's gaps:
//
// 1. The record: `publish` inserts the event into `bus_events` (a short-lived log of what the domain
//    published: only events a browser may see, after any bank-step hold), durably, in its own statement.
// 2. The wake-up: then, outside that statement and outside every business transaction, `pg_notify` on
//    the schema's channel, carrying the event (or only its row id when too long for NOTIFY's 8000 bytes).
//    Each instance LISTENs on one connection of its own and dispatches locally (one Map lookup per
//    message, as the Redis bus does). NOTIFY is kept out of the business transactions on purpose: a
//    transaction that notifies holds a database-wide lock from its commit until it ends — with a
//    synchronous standby, for the standby's round trip — so every notifying committer would queue behind
//    the others. The notification's own transaction commits with `synchronous_commit = off`: it records
//    nothing, so it has nothing to wait for.
// 3. The floor: notifications are lost while the listening connection is down (a restart, a failover: they
//    are not replicated either). So each instance also reads `bus_events` — after every (re)connect of its
//    listener, and every `pollIntervalMs` while it has sockets waiting — from a little before its last
//    read (the server's clock), for the sessions it holds. An event read twice (a notification and a
//    read) is dispatched once: the bus remembers the row ids it dispatched.
//
// Each subscription receives at most one terminal event, as on Redis. Rows are kept minutes
// (housekeeping.ts): an instance cut off longer than that relies on the relay's own re-read
// (relay/subscriptions.ts) and the browser's reconnect, both of which read the store.
import type { Client, Notification } from 'pg';
import { decodeEvent } from '../session-codec.ts';
import type { ResultBus, SessionEvent } from '../result-bus.ts';
import { dispatchToSubscriptions, type Listener, type Subscription } from '../bus-subscriptions.ts';
import type { Database } from './database.ts';
import type { PostgresLogger } from './options.ts';
import { loadPg } from './packages.ts';

/** NOTIFY's payload limit is 8000 bytes; an event longer than this travels as its row id. */
const MAX_NOTIFY_PAYLOAD = 7_900;
/** How far before the last read a read looks again: commits land a little after their row's time. */
const READ_OVERLAP_MS = 5_000;
/** How long a dispatched row id is remembered (longer than the overlap, so no read dispatches it twice). */
const SEEN_MS = 60_000;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 2_000;
/** A listener that cannot run `SELECT 1` within this is taken for dead (a half-open socket after a failover). */
const LISTENER_CHECK_MS = 5_000;

export interface PostgresResultBusOptions {
  /** How often the bus reads `bus_events` while sockets wait here (the floor under NOTIFY). Default 1 s. */
  pollIntervalMs?: number | undefined;
  logger?: PostgresLogger | undefined;
}

export class PostgresResultBus implements ResultBus {
  readonly #db: Database;
  readonly #channel: string;
  readonly #logger: PostgresLogger | undefined;
  readonly #pollIntervalMs: number;
  readonly #subscriptions = new Map<string, Set<Subscription>>();
  /** Row ids dispatched, with when: each event reaches a subscription once, whichever path brought it. */
  readonly #seen = new Map<string, number>();
  #listener: Client | undefined;
  #listening: Promise<void> | undefined;
  #reconnectDelay = RECONNECT_MIN_MS;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #pollTimer: NodeJS.Timeout | undefined;
  #checkTimer: NodeJS.Timeout | undefined;
  /** The server's time of the last complete read (ISO), the next read starts a little before it. */
  #readFrom: string | undefined;
  #reading: Promise<void> | undefined;
  #closed = false;
  #down = false;
  #connected!: () => void;
  readonly #firstConnect = new Promise<void>((resolve) => (this.#connected = resolve));

  constructor(db: Database, options: PostgresResultBusOptions = {}) {
    this.#db = db;
    this.#channel = `${db.schema}_session_events`;
    this.#logger = options.logger;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.#listen();
    this.#pollTimer = setInterval(() => {
      this.#forgetOldIds();
      if (this.#subscriptions.size > 0) void this.#read();
    }, this.#pollIntervalMs);
    this.#pollTimer.unref();
  }

  /** Resolves once the listener is connected and listening (tests; the bus works before, by its reads). */
  ready(timeoutMs = 10_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`PostgreSQL listener not ready after ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([this.#firstConnect, timeout]).finally(() => clearTimeout(timer));
  }

  /**
   * Records the event (rejects with SessionBackendUnavailableError while the database cannot be reached:
   * the caller's outcome is stored; the provider's retry publishes it again), then wakes every instance.
   * A failed wake-up is not an error: the instances' reads find the row.
   */
  async publish(event: SessionEvent): Promise<void> {
    const body = JSON.stringify(event);
    const [row] = await this.#db.query<{ id: string }>(
      'INSERT INTO bus_events (session_id, body) VALUES ($1, $2) RETURNING id',
      [event.sessionId, body],
    );
    const id = row!.id;
    const payload = body.length + id.length + 1 <= MAX_NOTIFY_PAYLOAD ? `${id} ${body}` : id;
    await this.#db
      .query("SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)", [this.#channel, payload])
      .catch((error: unknown) => {
        this.#logger?.warn(
          { err: (error as Error).message },
          "a session event was recorded but its NOTIFY failed; the instances' reads deliver it",
        );
      });
  }

  subscribe(sessionId: string, listener: Listener): () => void {
    const subscription: Subscription = { listener, settled: false };
    let set = this.#subscriptions.get(sessionId);
    if (!set) this.#subscriptions.set(sessionId, (set = new Set()));
    set.add(subscription);
    return () => {
      set.delete(subscription);
      if (set.size === 0 && this.#subscriptions.get(sessionId) === set) this.#subscriptions.delete(sessionId);
    };
  }

  /** Number of sessions with at least one local listener (tests). */
  get sessionCount(): number {
    return this.#subscriptions.size;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#pollTimer);
    clearInterval(this.#checkTimer);
    clearTimeout(this.#reconnectTimer);
    this.#subscriptions.clear();
    const listener = this.#listener;
    this.#listener = undefined;
    await this.#listening?.catch(() => undefined);
    await this.#reading?.catch(() => undefined);
    await listener?.end().catch(() => undefined);
  }

  /** Connects the listener, LISTENs, then reads what may have been missed meanwhile. */
  #listen(): void {
    if (this.#closed) return;
    const client = new (loadPg().Client)(this.#db.connectionSettings('listener'));
    this.#listener = client;
    client.on('notification', (message: Notification) => this.#onNotification(message));
    client.on('error', (error: Error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, new Error('connection ended')));
    this.#listening = (async () => {
      await client.connect();
      await client.query(`LISTEN ${this.#channel}`);
    })().then(
      () => {
        if (this.#listener !== client) return;
        if (this.#down)
          this.#logger?.info(
            { channel: this.#channel },
            'PostgreSQL listener is back; reading the session events it may have missed',
          );
        this.#down = false;
        this.#reconnectDelay = RECONNECT_MIN_MS;
        this.#connected();
        this.#watch(client);
        // Listen first, read second: an event committed meanwhile comes one way or the other.
        void this.#read();
      },
      (error: unknown) => this.#lost(client, error as Error),
    );
  }

  /** A listener that stops answering (a failover behind a moved address leaves a half-open socket) is replaced. */
  #watch(client: Client): void {
    clearInterval(this.#checkTimer);
    this.#checkTimer = setInterval(() => {
      const check = client.query('SELECT 1');
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the listener did not answer')), LISTENER_CHECK_MS).unref(),
      );
      Promise.race([check, timeout]).catch((error: unknown) => this.#lost(client, error as Error));
    }, LISTENER_CHECK_MS);
    this.#checkTimer.unref();
  }

  #lost(client: Client, error: Error): void {
    if (this.#listener !== client || this.#closed) return;
    this.#listener = undefined;
    clearInterval(this.#checkTimer);
    client.removeAllListeners('notification');
    // Keep an 'error' listener: a late socket error on the dropped client must not end the process.
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (!this.#down)
      this.#logger?.warn(
        { err: error.message, channel: this.#channel },
        'PostgreSQL listener lost; reconnecting (the bus reads the session events meanwhile)',
      );
    this.#down = true;
    this.#reconnectTimer = setTimeout(() => this.#listen(), this.#reconnectDelay);
    this.#reconnectTimer.unref();
    this.#reconnectDelay = Math.min(this.#reconnectDelay * 2, RECONNECT_MAX_MS);
  }

  #onNotification(message: Notification): void {
    if (message.channel !== this.#channel || !message.payload) return;
    const space = message.payload.indexOf(' ');
    if (space < 0) {
      // Too long to travel: read it (with everything else recent).
      void this.#read();
      return;
    }
    this.#dispatch(message.payload.slice(0, space), message.payload.slice(space + 1));
  }

  /**
   * Reads the recent session events of the sessions waiting here and dispatches those not seen yet. One
   * read at a time; a read that fails leaves `#readFrom` where it was, so the next one covers the gap.
   */
  #read(): Promise<void> {
    this.#reading ??= this.#readOnce()
      .catch(() => undefined)
      .finally(() => {
        this.#reading = undefined;
      });
    return this.#reading;
  }

  async #readOnce(): Promise<void> {
    const sessions = this.#waitingSessions();
    if (sessions.length === 0) {
      this.#readFrom = undefined;
      return;
    }
    const rows = await this.#db.query<{ now: string; id: string | null; body: string | null }>(
      `WITH clock AS (SELECT clock_timestamp() AS now)
      SELECT clock.now::text AS now, events.id, events.body FROM clock LEFT JOIN bus_events AS events
        ON events.session_id = ANY($1::text[]) AND events.created_at >= coalesce($2::timestamptz, clock.now) - $3 * interval '1 millisecond'
      ORDER BY events.id`,
      [sessions, this.#readFrom ?? null, READ_OVERLAP_MS + this.#pollIntervalMs],
    );
    for (const row of rows) if (row.id !== null && row.body !== null) this.#dispatch(row.id, row.body);
    this.#readFrom = rows[0]?.now;
  }

  #dispatch(id: string, body: string): void {
    if (this.#seen.has(id)) return;
    const event = decodeEvent(body);
    if (!event) {
      this.#logger?.warn({ channel: this.#channel }, 'ignored a malformed session event');
      return;
    }
    const set = this.#subscriptions.get(event.sessionId);
    // Remembered only when it reached someone here: a session subscribed later reads it (and the store) itself.
    if (!set) return;
    this.#seen.set(id, Date.now());
    dispatchToSubscriptions(set, event, this.#logger);
  }

  /** Sessions with a local subscription still waiting for its terminal event. */
  #waitingSessions(): string[] {
    const waiting: string[] = [];
    for (const [sessionId, set] of this.#subscriptions) {
      if ([...set].some((subscription) => !subscription.settled)) waiting.push(sessionId);
    }
    return waiting;
  }

  #forgetOldIds(): void {
    const before = Date.now() - SEEN_MS;
    for (const [id, at] of this.#seen) {
      if (at >= before) break;
      this.#seen.delete(id);
    }
  }
}
