// A socket's subscription to its session: the first message names the session; the relay listens on the
// bus first, then reads the store, so an outcome stored before, during or after the subscription reaches
// the socket exactly once. A waiting session is also re-read at its expiry, and at a slow interval before
// it, so a result whose message was lost anyway still arrives. One bus subscription and one timer per
// session on this instance, whatever the number of its sockets.
import type { Logger } from 'pino';
import type { RawData, WebSocket } from 'ws';
import { ID_PATTERN, sessionLogRef } from '../common/ids.ts';
import { safeError } from '../common/logger.ts';
import { StoreOutageLog } from '../storage/outage-log.ts';
import { browserOutcome, type ResultBus, type SessionEvent } from '../storage/result-bus.ts';
import type { SessionRecord, SessionStore } from '../storage/sessions.ts';
import { CLOSE, closeSoon, type ServerMessage, SubscribeMessage } from './messages.ts';

/** One socket of this relay. */
export interface Client {
  socket: WebSocket;
  /** The client address it counts against. */
  address: string;
  /** Whether it answered the last ping (heartbeat.ts). */
  isAlive: boolean;
  sessionId?: string;
  /** Events that arrived while the store was being read; delivered after `subscribed`. */
  queued?: SessionEvent[];
  terminalSent: boolean;
  subscribeTimer?: NodeJS.Timeout;
}

/** Everything this instance holds for one session: its sockets, the bus subscription, the expiry timer. */
interface LocalSession {
  clients: Set<Client>;
  unsubscribe: () => void;
  expiryTimer?: NodeJS.Timeout;
}

/** setTimeout's ceiling (~24.8 days); longer waits are re-armed. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export interface SubscriptionOptions {
  /** Reads sessions as a browser may see them (obv-proxy.ts passes verifications/bank-step.ts's shownReader). */
  store: Pick<SessionStore, 'get'>;
  bus: ResultBus;
  logger: Logger;
  now: () => number;
  /** How soon an expiry check that could not read the store is tried again. */
  expiryRetryMs: number;
  /** How often a session still waiting is re-read from the store (pub/sub is at-most-once). */
  recheckIntervalMs: number;
  /** Sockets per session; a new subscription beyond it replaces the oldest (closed with 4409). */
  maxPerSession: number;
  /** Takes the failures caused by a session store outage, logged once per outage; default: logged one by one. */
  storeOutage?: StoreOutageLog | undefined;
}

export interface Subscriptions {
  /** The socket's first message: its subscription (anything after it is ignored by the caller). */
  subscribe(client: Client, data: RawData, isBinary: boolean): Promise<void>;
  /** The socket is gone: it leaves its session (the last one out ends the bus subscription and the timer). */
  leave(client: Client): void;
  /** Number of sessions with a socket on this instance. */
  readonly sessionCount: number;
}

export function createSubscriptions(options: SubscriptionOptions): Subscriptions {
  const { store, bus, logger, now } = options;
  const sessions = new Map<string, LocalSession>();
  // A bus that catches up after missing messages (Redis) reads what this relay would: never a success held
  // for its bank step.
  bus.readThrough?.(store);

  function send(client: Client, message: ServerMessage): void {
    if (client.socket.readyState === client.socket.OPEN) client.socket.send(JSON.stringify(message));
  }

  function badMessage(client: Client, message: string): void {
    send(client, { type: 'error', code: 'bad_message', message });
    client.socket.close(CLOSE.badMessage, 'bad message');
  }

  function unknownSession(client: Client): void {
    send(client, { type: 'error', code: 'unknown_session', message: 'No verification session has this id.' });
    client.socket.close(CLOSE.unknownSession, 'unknown session');
  }

  async function subscribe(client: Client, data: RawData, isBinary: boolean): Promise<void> {
    clearTimeout(client.subscribeTimer);
    // Drop the cleared timer too: an idle subscribed socket would otherwise keep it alive.
    client.subscribeTimer = undefined;
    if (isBinary) return badMessage(client, 'Messages must be JSON text.');
    let json: unknown;
    try {
      json = JSON.parse(String(data));
    } catch {
      return badMessage(client, 'Messages must be JSON text.');
    }
    const parsed = SubscribeMessage.safeParse(json);
    if (!parsed.success) return badMessage(client, 'The first message must be {"type":"subscribe","sessionId":"…"}.');
    const { sessionId } = parsed.data;
    client.sessionId = sessionId;
    // An id that cannot exist is refused before any bus subscription is made for it (a Redis SUBSCRIBE
    // per junk id would let a client make the relay do work for sessions that are not there).
    if (!ID_PATTERN.test(sessionId)) return unknownSession(client);
    client.queued = [];
    // Listen first, read second: an event published during the read is queued, not lost.
    join(client, sessionId);
    const record = await store.get(sessionId);
    if (client.socket.readyState !== client.socket.OPEN) return;
    if (!record) return unknownSession(client);
    send(client, { type: 'subscribed', sessionId, state: record.state });
    const queued = client.queued;
    client.queued = undefined;
    deliverRecord(client, record);
    for (const event of queued) deliver(client, event);
    if (!client.terminalSent) armExpiry(sessionId, record.expiresAt);
  }

  /** What a freshly read record means for a subscriber: its outcome, or its expiry. */
  function deliverRecord(client: Client, record: SessionRecord): void {
    if (record.outcome)
      deliver(client, {
        type: 'result',
        sessionId: record.sessionId,
        outcome: browserOutcome(record.outcome, record.language),
      });
    else if (record.state === 'expired') deliver(client, { type: 'expired', sessionId: record.sessionId });
  }

  function deliver(client: Client, event: SessionEvent): void {
    if (client.queued) {
      client.queued.push(event);
      return;
    }
    if (client.terminalSent) return;
    if (event.type === 'state') {
      send(client, event);
      return;
    }
    client.terminalSent = true;
    send(client, event);
    client.socket.close(CLOSE.done, event.type);
  }

  function join(client: Client, sessionId: string): void {
    let local = sessions.get(sessionId);
    if (!local) {
      const members = new Set<Client>();
      const unsubscribe = bus.subscribe(sessionId, (event) => {
        for (const member of members) deliver(member, event);
      });
      local = { clients: members, unsubscribe };
      sessions.set(sessionId, local);
    }
    // A new socket replaces the oldest (a reloaded page's socket may not have closed yet); the oldest
    // leaves the session now, so a flood of subscriptions to one session holds at most this many.
    while (local.clients.size >= options.maxPerSession) {
      const oldest = local.clients.values().next().value as Client;
      local.clients.delete(oldest);
      oldest.terminalSent = true;
      closeSoon(oldest.socket, CLOSE.replaced, 'replaced by a newer connection');
    }
    local.clients.add(client);
  }

  /**
   * One timer per session on this instance: at expiry, or after `recheckIntervalMs` if that comes first,
   * re-read the store and tell the subscribers its outcome or expiry; otherwise wait again.
   */
  function armExpiry(sessionId: string, expiresAt: number): void {
    const local = sessions.get(sessionId);
    if (!local || local.expiryTimer) return;
    const wait = Math.min(Math.max(0, expiresAt - now()) + 5, options.recheckIntervalMs, MAX_TIMEOUT_MS);
    local.expiryTimer = setTimeout(() => {
      local.expiryTimer = undefined;
      void store
        .get(sessionId)
        .then((record) => {
          if (sessions.get(sessionId) !== local) return;
          if (!record) {
            for (const member of local.clients) deliver(member, { type: 'expired', sessionId });
          } else if (record.outcome || record.state === 'expired') {
            for (const member of local.clients) deliverRecord(member, record);
          } else {
            armExpiry(sessionId, record.expiresAt);
          }
        })
        .catch((error: unknown) => {
          if (sessions.get(sessionId) !== local) return;
          if (now() < expiresAt) {
            // A periodic re-check during an outage: the next one comes anyway (no log line per session).
            logger.debug({ err: safeError(error), session: sessionLogRef(sessionId) }, 'session re-check failed');
            armExpiry(sessionId, expiresAt);
            return;
          }
          // The store may be briefly unreachable: check again soon rather than leave the sockets waiting.
          if (options.storeOutage && StoreOutageLog.covers(error)) options.storeOutage.refused('expiryChecks', error);
          else
            logger.error({ err: safeError(error), session: sessionLogRef(sessionId) }, 'expiry check failed; retrying');
          armExpiry(sessionId, now() + options.expiryRetryMs);
        });
    }, wait);
  }

  return {
    subscribe,
    leave(client) {
      const sessionId = client.sessionId;
      if (sessionId === undefined) return;
      const local = sessions.get(sessionId);
      if (!local) return;
      local.clients.delete(client);
      if (local.clients.size === 0) {
        local.unsubscribe();
        clearTimeout(local.expiryTimer);
        sessions.delete(sessionId);
      }
    },
    get sessionCount() {
      return sessions.size;
    },
  };
}
