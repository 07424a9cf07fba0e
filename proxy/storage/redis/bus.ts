// ResultBus over Redis pub/sub: a notification taken by any instance reaches the browser whose socket is
// held by any other.
//
// One channel (`{prefix}events`) carries every event, and each instance dispatches locally through a
// Map keyed by sessionId. Per message that is one JSON parse and one Map lookup, whatever the number of
// open sessions. The alternatives cost more for what they save: a channel per session with SUBSCRIBE
// means a round trip per browser and thousands of channels to restore after a reconnect; PSUBSCRIBE on
// `{prefix}events:*` still sends every event to every instance, so it saves nothing over one channel.
// The price of one channel is that each instance receives every event; events are a few small
// messages per session, far below what one Redis connection carries.
//
// Pub/sub is at-most-once: a message published while this instance's subscriber connection is down is
// gone. The store is the source of truth, so after every (re)subscription the bus re-reads the store for
// the sessions it has listeners for and delivers outcomes it may have missed, re-reading the ones it could
// not read (the commands connection may come back after the subscriber) until it has read them all.
import type { Redis } from 'ioredis';
import { decodeEvent } from '../session-codec.ts';
import { closeConnection, createRedisConnection, readyOrClose, waitUntilReady } from './connection.ts';
import type { RedisConnectionOptions, RedisLogger } from './connection-options.ts';
import { redisCommand } from './errors.ts';
import { redisKeys } from './keys.ts';
import { resultOf, type ResultBus, type SessionEvent } from '../result-bus.ts';
import type { SessionStore } from '../sessions.ts';
import { dispatchToSubscriptions, type Listener, type Subscription } from '../bus-subscriptions.ts';

export interface RedisResultBusOptions extends Omit<RedisConnectionOptions, 'role'> {
  /** Prefix of the events channel (default `obv:`). */
  prefix?: string;
  /**
   * Where a catch-up after the subscriber connection was down reads a session's current result (until
   * `readThrough` names another reader). Without it, events missed during an outage stay missed until
   * the browser re-subscribes.
   */
  sessions?: Pick<SessionStore, 'get'>;
}

/** How many sessions the catch-up reads at once after a reconnect. */
const CATCH_UP_BATCH = 200;
/** First and longest wait before re-reading sessions a catch-up could not read. */
const CATCH_UP_RETRY_MIN_MS = 100;
const CATCH_UP_RETRY_MAX_MS = 2_000;

/**
 * Publishes on its own connection and listens on a dedicated subscriber connection (a connection in
 * subscribe mode takes no other commands). Each subscription receives at most one terminal event
 * (`result` or `expired`), so a catch-up that overlaps a live message never shows a browser two results.
 */
export class RedisResultBus implements ResultBus {
  readonly #publisher: Redis;
  readonly #subscriber: Redis;
  readonly #channel: string;
  readonly #subscriptions = new Map<string, Set<Subscription>>();
  #sessions: Pick<SessionStore, 'get'> | undefined;
  readonly #logger: RedisLogger | undefined;
  #subscribed: Promise<void>;
  #markSubscribed: () => void = () => undefined;
  /** Counts (re)subscriptions; a catch-up retry of an older one stops. */
  #generation = 0;
  #catchUpRetry: NodeJS.Timeout | undefined;

  constructor(options: RedisResultBusOptions) {
    this.#publisher = createRedisConnection({ ...options, role: 'publisher' });
    this.#subscriber = createRedisConnection({ ...options, role: 'subscriber' });
    this.#channel = redisKeys(options.prefix).eventsChannel;
    this.#sessions = options.sessions;
    this.#logger = options.logger;
    this.#subscribed = new Promise((resolve) => (this.#markSubscribed = resolve));
    this.#subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.#channel) this.#onMessage(message);
    });
    // Every time the subscriber connection becomes ready (first connect and each reconnect), subscribe
    // again and then catch up; `autoResubscribe` is off so that the catch-up runs only once the
    // subscription is live, leaving no gap in which an event could slip past both.
    this.#subscriber.on('ready', () => void this.#resubscribe());
  }

  /** Resolves once both connections are up and the channel subscription is live. */
  async ready(timeoutMs = 10_000): Promise<void> {
    await Promise.all([waitUntilReady(this.#publisher, timeoutMs), waitUntilReady(this.#subscriber, timeoutMs)]);
    await withTimeout(this.#subscribed, timeoutMs, 'Redis events subscription not live');
  }

  /**
   * Rejects with SessionBackendUnavailableError while Redis is unreachable (the caller's outcome is
   * already in the store; the provider's retry publishes it again).
   */
  async publish(event: SessionEvent): Promise<void> {
    await redisCommand(this.#publisher.publish(this.#channel, JSON.stringify(event)));
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

  /**
   * Catch-ups read sessions through `sessions` from now on: the relay's reader (sessions as a browser may
   * see them), so a success held for its bank step is not sent to a socket after a reconnect.
   */
  readThrough(sessions: Pick<SessionStore, 'get'>): void {
    this.#sessions = sessions;
  }

  /** Number of sessions with at least one local listener (for tests and metrics). */
  get sessionCount(): number {
    return this.#subscriptions.size;
  }

  async close(): Promise<void> {
    this.#generation++;
    clearTimeout(this.#catchUpRetry);
    this.#subscriptions.clear();
    await Promise.all([closeConnection(this.#subscriber), closeConnection(this.#publisher)]);
  }

  #onMessage(message: string): void {
    const event = decodeEvent(message);
    if (!event) {
      this.#logger?.warn({ channel: this.#channel }, 'ignored a malformed message on the events channel');
      return;
    }
    this.#dispatch(event);
  }

  #dispatch(event: SessionEvent): void {
    const set = this.#subscriptions.get(event.sessionId);
    if (!set) return;
    dispatchToSubscriptions(set, event, this.#logger);
  }

  async #resubscribe(): Promise<void> {
    try {
      await this.#subscriber.subscribe(this.#channel);
    } catch (error) {
      // The connection dropped again; the next 'ready' tries again.
      this.#logger?.warn({ err: errorMessage(error) }, 'redis events subscription failed');
      return;
    }
    this.#markSubscribed();
    const generation = ++this.#generation;
    clearTimeout(this.#catchUpRetry);
    await this.#catchUpAll([...this.#subscriptions.keys()], generation, CATCH_UP_RETRY_MIN_MS);
  }

  /**
   * Reads the store for `sessionIds` and delivers outcomes found. Sessions whose read failed (the
   * commands connection can come back after the subscriber) are read again after `delayMs`, doubling up
   * to a cap, until every one was read, was given up by its listeners, or a newer (re)subscription
   * started its own catch-up (`generation`).
   */
  async #catchUpAll(sessionIds: string[], generation: number, delayMs: number): Promise<void> {
    const sessions = this.#sessions;
    if (!sessions) return;
    const catchUp = async (sessionId: string) => resultOf(await sessions.get(sessionId));
    const failed: string[] = [];
    for (let i = 0; i < sessionIds.length && generation === this.#generation; i += CATCH_UP_BATCH) {
      const batch = sessionIds.slice(i, i + CATCH_UP_BATCH).filter((id) => this.#waiting(id));
      const events = await Promise.allSettled(batch.map((id) => catchUp(id)));
      events.forEach((settled, j) => {
        if (settled.status === 'rejected') failed.push(batch[j]!);
        else if (settled.value) this.#dispatch(settled.value);
      });
    }
    if (generation !== this.#generation) return;
    const retrying = delayMs > CATCH_UP_RETRY_MIN_MS;
    if (failed.length === 0) {
      if (retrying) this.#logger?.info({}, 'catch-up after the Redis reconnect read every session');
      return;
    }
    // Logged once per reconnect, not once per attempt.
    if (!retrying)
      this.#logger?.warn(
        { unread: failed.length },
        'catch-up after the Redis reconnect could not read every session; retrying',
      );
    this.#catchUpRetry = setTimeout(() => {
      void this.#catchUpAll(failed, generation, Math.min(delayMs * 2, CATCH_UP_RETRY_MAX_MS));
    }, delayMs);
    this.#catchUpRetry.unref();
  }

  /** Whether some local listener of `sessionId` still waits for its terminal event. */
  #waiting(sessionId: string): boolean {
    const set = this.#subscriptions.get(sessionId);
    return set !== undefined && [...set].some((subscription) => !subscription.settled);
  }
}

/** Opens a {@link RedisResultBus} and waits until its subscription is live. */
export function openRedisResultBus(options: RedisResultBusOptions, readyTimeoutMs?: number): Promise<RedisResultBus> {
  return readyOrClose(new RedisResultBus(options), readyTimeoutMs);
}

function withTimeout(promise: Promise<void>, ms: number, message: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
