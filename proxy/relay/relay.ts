// The WebSocket relay: a browser subscribes to its session and receives state changes, then exactly one
// terminal message (`result` or `expired`), then the socket closes. Its parts: the upgrade (upgrade.ts:
// path, origin, caps), the subscriptions (subscriptions.ts: the bus, the store and the one terminal
// message), the heartbeat (heartbeat.ts); here they are put together on one server, and each socket's
// life is kept (its address's count, its subscribe deadline).
import type { IncomingMessage, Server } from 'node:http';
import type { Logger } from 'pino';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { safeError } from '../common/logger.ts';
import type { OriginPolicy } from '../http/origin.ts';
import type { ResultBus } from '../storage/result-bus.ts';
import type { SessionStore } from '../storage/sessions.ts';
import { StoreOutageLog } from '../storage/outage-log.ts';
import { startHeartbeat } from './heartbeat.ts';
import { CLOSE } from './messages.ts';
import { defaultSocketCap } from './socket-cap.ts';
import { createSubscriptions, type Client } from './subscriptions.ts';
import { upgradeHandler } from './upgrade.ts';
import {
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
  /** Reads sessions as a browser may see them (obv-proxy.ts passes verifications/bank-step.ts's shownReader). */
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
  const { logger } = options;
  const subscribeTimeoutMs = options.subscribeTimeoutMs ?? RELAY_SUBSCRIBE_TIMEOUT_MS;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayload ?? RELAY_MAX_PAYLOAD_BYTES,
    clientTracking: false,
  });
  const clients = new Set<Client>();
  const perAddress = new Map<string, number>();
  const maxSockets = options.maxSockets ?? defaultSocketCap();
  const maxPerClient = options.maxSocketsPerClient ?? 64;
  const subscriptions = createSubscriptions({
    store: options.store,
    bus: options.bus,
    logger,
    now: options.now ?? Date.now,
    expiryRetryMs: options.expiryRetryMs ?? RELAY_EXPIRY_RETRY_MS,
    recheckIntervalMs: options.recheckIntervalMs ?? RELAY_RECHECK_INTERVAL_MS,
    maxPerSession: options.maxSocketsPerSession ?? 4,
    storeOutage: options.storeOutage,
  });
  /** Each socket's Client, so the shared listeners below can find it from `this` (the socket). */
  const clientOfSocket = new WeakMap<WebSocket, Client>();
  const clientOf = (socket: WebSocket): Client => clientOfSocket.get(socket) as Client;

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
    void subscriptions.subscribe(client, data, isBinary).catch((error: unknown) => {
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

  function forget(client: Client): void {
    clearTimeout(client.subscribeTimer);
    client.subscribeTimer = undefined;
    if (clients.delete(client)) {
      const count = (perAddress.get(client.address) ?? 1) - 1;
      if (count > 0) perAddress.set(client.address, count);
      else perAddress.delete(client.address);
    }
    subscriptions.leave(client);
  }

  const stopHeartbeat = startHeartbeat(clients, options.pingIntervalMs ?? RELAY_PING_INTERVAL_MS);
  const onUpgrade = upgradeHandler(server, wss, {
    path: options.path,
    originPolicy: options.originPolicy,
    addressOf: options.clientAddress ?? ((req: IncomingMessage) => req.socket.remoteAddress ?? ''),
    full: (address) => clients.size >= maxSockets || (perAddress.get(address) ?? 0) >= maxPerClient,
    onConnection,
  });
  server.on('upgrade', onUpgrade);

  return {
    get connectionCount() {
      return clients.size;
    },
    get sessionCount() {
      return subscriptions.sessionCount;
    },
    async close() {
      stopHeartbeat();
      server.off('upgrade', onUpgrade);
      for (const client of clients) client.socket.close(CLOSE.goingAway, 'server shutting down');
      // Give the close handshakes a moment, then cut what is left so the http server can close.
      for (let waited = 0; clients.size > 0 && waited < RELAY_SHUTDOWN_WAIT_MS; waited += 25)
        await new Promise((resolve) => setTimeout(resolve, 25));
      for (const client of clients) client.socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
