// The WebSocket relay: a browser subscribes to its session and receives state changes, then exactly one
// terminal message (`result` or `expired`), then the socket closes. The store is the source of truth:
// the relay subscribes to the bus first, then reads the store, so an outcome stored before, during or
// after the subscription reaches the socket exactly once. A waiting session is also re-read at a slow
// interval, so a result whose message was lost anyway still arrives.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { safeError } from '../common/logger.ts';
import type { OriginPolicy } from '../http/origin.ts';
import { browserOutcome, type ResultBus, type SessionEvent } from '../storage/result-bus.ts';
import { type SessionRecord, type SessionStore } from '../storage/sessions.ts';
import { ID_PATTERN, sessionLogRef } from '../common/ids.ts';
import { CLOSE, type ServerMessage, SubscribeMessage } from './messages.ts';
import { defaultSocketCap } from './socket-cap.ts';
import { StoreOutageLog } from '../storage/outage-log.ts';
import {
  RELAY_CLOSE_GRACE_MS,
  RELAY_EXPIRY_RETRY_MS,
  RELAY_MAX_PAYLOAD_BYTES,
  RELAY_PING_INTERVAL_MS,
  RELAY_RECHECK_INTERVAL_MS,
  RELAY_SHUTDOWN_WAIT_MS,
  RELAY_SUBSCRIBE_TIMEOUT_MS,
} from '../config/limits.ts';

export interface RelayOptions {
  /** Upgrade path, e.g. `/obv/ws`. */
  path: string;
  /** Reads sessions as a browser may see them (index.ts passes sessions/bank-step.ts's releasedReader). */
  store: Pick<SessionStore, 'get'>;
  bus: ResultBus;
  originPolicy: OriginPolicy;
  logger: Logger;
  /** Close sockets that have not subscribed by then. Default 5 s. */
  subscribeTimeoutMs?: number;
  /** Heartbeat period; a socket that misses one pong is terminated. Default 30 s. */
  pingIntervalMs?: number;
  /** How soon an expiry check that could not read the store is tried again. Default 5 s. */
  expiryRetryMs?: number;
  /**
   * How often a session still waiting is re-read from the store, in case its published result never
   * reached this instance (defence in depth: pub/sub is at-most-once). Default 60 s.
   */
  recheckIntervalMs?: number;
  /** Largest client message accepted. Default 1 KiB. */
  maxPayload?: number;
  /** The client address of an upgrade request (honouring `trust proxy`); default: the socket's peer. */
  clientAddress?: (req: IncomingMessage) => string;
  /** Sockets per session; a new subscription beyond it replaces the oldest (closed with 4409). Default 4. */
  maxSocketsPerSession?: number;
  /** Sockets per client address; more are closed with 1013 right after the handshake. Default 64. */
  maxSocketsPerClient?: number;
  /** Sockets on this relay; more are closed with 1013. Default: defaultSocketCap() (≤ 10,000). */
  maxSockets?: number;
  /** Takes the failures caused by a session store outage, logged once per outage; default: logged one by one. */
  storeOutage?: StoreOutageLog;
  now?: () => number;
}

interface Client {
  socket: WebSocket;
  /** The client address it counts against. */
  address: string;
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

export interface Relay {
  /** Number of open sockets (for health and tests). */
  readonly connectionCount: number;
  /** Number of sessions with a socket on this instance. */
  readonly sessionCount: number;
  /** Stops the heartbeat, closes every socket (1001) and detaches from the server(s). */
  close(): Promise<void>;
}

/**
 * Attaches the relay to `server`'s `upgrade` event (ws `noServer` mode). Upgrades to other paths are
 * left to other listeners; when there are none they are refused with 404.
 */
export function attachRelay(server: Server, options: RelayOptions): Relay {
  const { path, store, bus, originPolicy, logger } = options;
  const now = options.now ?? Date.now;
  const subscribeTimeoutMs = options.subscribeTimeoutMs ?? RELAY_SUBSCRIBE_TIMEOUT_MS;
  const expiryRetryMs = options.expiryRetryMs ?? RELAY_EXPIRY_RETRY_MS;
  const recheckIntervalMs = options.recheckIntervalMs ?? RELAY_RECHECK_INTERVAL_MS;
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload ?? RELAY_MAX_PAYLOAD_BYTES, clientTracking: false });
  const clients = new Set<Client>();
  const sessions = new Map<string, LocalSession>();
  const perAddress = new Map<string, number>();
  const maxSockets = options.maxSockets ?? defaultSocketCap();
  const maxPerClient = options.maxSocketsPerClient ?? 64;
  const maxPerSession = options.maxSocketsPerSession ?? 4;
  const addressOf = options.clientAddress ?? ((req: IncomingMessage) => req.socket.remoteAddress ?? '');
  /** Each socket's Client, so the shared listeners below can find it from `this` (the socket). */
  const clientOfSocket = new WeakMap<WebSocket, Client>();
  const clientOf = (socket: WebSocket): Client => clientOfSocket.get(socket) as Client;

  /** Closes with `code`, and cuts the socket if the peer does not finish the close handshake soon. */
  function closeSoon(socket: WebSocket, code: number, reason: string): void {
    socket.close(code, reason);
    setTimeout(() => socket.terminate(), RELAY_CLOSE_GRACE_MS).unref();
  }

  function send(client: Client, message: ServerMessage): void {
    if (client.socket.readyState === client.socket.OPEN) client.socket.send(JSON.stringify(message));
  }

  function refuse(socket: Duplex, status: number, reason: string): void {
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    socket.destroy();
  }

  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const pathname = (req.url ?? '').split('?')[0];
    if (pathname !== path) {
      // Another 'upgrade' listener (a dev server's HMR, another app) may own this path.
      if (server.listenerCount('upgrade') <= 1) refuse(socket, 404, 'Not Found');
      return;
    }
    socket.on('error', () => socket.destroy());
    const origin = req.headers.origin;
    if (!origin || !originPolicy.check(origin, 'websocket')) {
      refuse(socket, 403, 'Forbidden');
      return;
    }
    const address = addressOf(req);
    // Over a cap, the handshake still completes so that the browser learns why (1013, "try again
    // later") instead of a bare connection failure; the socket is then closed at once.
    const full = clients.size >= maxSockets || (perAddress.get(address) ?? 0) >= maxPerClient;
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (full) closeSoon(ws, CLOSE.tryAgainLater, 'too many connections');
      else onConnection(ws, address);
    });
  }

  // One set of listeners shared by every socket (`this` is the socket, its Client in clientOfSocket), rather
  // than four closures per connection: idle subscribed sockets are what this server holds most of.
  function onSocketError(error: Error): void {
    logger.debug({ err: safeError(error) }, 'WebSocket error');
  }
  function onPong(this: WebSocket): void {
    clientOf(this).isAlive = true;
  }
  function onClose(this: WebSocket): void {
    forget(clientOf(this));
  }
  function onMessage(this: WebSocket, data: RawData, isBinary: boolean): void {
    const client = clientOf(this);
    // Only the first message matters; anything after the subscription is ignored.
    if (client.sessionId !== undefined) return;
    void onSubscribe(client, data, isBinary).catch((error: unknown) => {
      if (options.storeOutage && StoreOutageLog.covers(error)) options.storeOutage.refused('subscriptions', error);
      else logger.error({ err: safeError(error) }, 'WebSocket subscription failed');
      client.socket.close(1011, 'internal error');
    });
  }
  function onSubscribeTimeout(client: Client): void {
    client.subscribeTimer = undefined;
    client.socket.close(CLOSE.subscribeTimeout, 'subscribe expected');
  }

  function onConnection(socket: WebSocket, address: string): void {
    const client: Client = { socket, address, isAlive: true, terminalSent: false };
    clientOfSocket.set(socket, client);
    clients.add(client);
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
    socket.on('error', onSocketError);
    socket.on('pong', onPong);
    socket.on('close', onClose);
    socket.on('message', onMessage);
    client.subscribeTimer = setTimeout(onSubscribeTimeout, subscribeTimeoutMs, client);
  }

  function badMessage(client: Client, message: string): void {
    send(client, { type: 'error', code: 'bad_message', message });
    client.socket.close(CLOSE.badMessage, 'bad message');
  }

  function unknownSession(client: Client): void {
    send(client, { type: 'error', code: 'unknown_session', message: 'No verification session has this id.' });
    client.socket.close(CLOSE.unknownSession, 'unknown session');
  }

  async function onSubscribe(client: Client, data: RawData, isBinary: boolean): Promise<void> {
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
    if (record.outcome) deliver(client, { type: 'result', sessionId: record.sessionId, outcome: browserOutcome(record.outcome, record.language) });
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
    while (local.clients.size >= maxPerSession) {
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
    const wait = Math.min(Math.max(0, expiresAt - now()) + 5, recheckIntervalMs, MAX_TIMEOUT_MS);
    local.expiryTimer = setTimeout(() => {
      local.expiryTimer = undefined;
      void store.get(sessionId).then((record) => {
        if (sessions.get(sessionId) !== local) return;
        if (!record) {
          for (const member of local.clients) deliver(member, { type: 'expired', sessionId });
        } else if (record.outcome || record.state === 'expired') {
          for (const member of local.clients) deliverRecord(member, record);
        } else {
          armExpiry(sessionId, record.expiresAt);
        }
      }).catch((error: unknown) => {
        if (sessions.get(sessionId) !== local) return;
        if (now() < expiresAt) {
          // A periodic re-check during an outage: the next one comes anyway (no log line per session).
          logger.debug({ err: safeError(error), session: sessionLogRef(sessionId) }, 'session re-check failed');
          armExpiry(sessionId, expiresAt);
          return;
        }
        // The store may be briefly unreachable: check again soon rather than leave the sockets waiting.
        if (options.storeOutage && StoreOutageLog.covers(error)) options.storeOutage.refused('expiryChecks', error);
        else logger.error({ err: safeError(error), session: sessionLogRef(sessionId) }, 'expiry check failed; retrying');
        armExpiry(sessionId, now() + expiryRetryMs);
      });
    }, wait);
  }

  function forget(client: Client): void {
    clearTimeout(client.subscribeTimer);
    client.subscribeTimer = undefined;
    if (clients.delete(client)) {
      const count = (perAddress.get(client.address) ?? 1) - 1;
      if (count > 0) perAddress.set(client.address, count);
      else perAddress.delete(client.address);
    }
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
  }

  const heartbeat = setInterval(() => {
    for (const client of clients) {
      if (!client.isAlive) {
        client.socket.terminate();
        continue;
      }
      client.isAlive = false;
      client.socket.ping();
    }
  }, options.pingIntervalMs ?? RELAY_PING_INTERVAL_MS);
  heartbeat.unref();

  server.on('upgrade', onUpgrade);

  return {
    get connectionCount() {
      return clients.size;
    },
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      clearInterval(heartbeat);
      server.off('upgrade', onUpgrade);
      for (const client of clients) client.socket.close(CLOSE.goingAway, 'server shutting down');
      // Give the close handshakes a moment, then cut what is left so the http server can close.
      for (let waited = 0; clients.size > 0 && waited < RELAY_SHUTDOWN_WAIT_MS; waited += 25) await new Promise((resolve) => setTimeout(resolve, 25));
      for (const client of clients) client.socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
