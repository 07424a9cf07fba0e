// The HTTP upgrade to a WebSocket (ws `noServer` mode): only at the relay's path, only from an allowed
// origin (http/origin.ts: the same list as CORS), and within the socket caps. Over a cap the handshake
// still completes, so the browser learns why (1013, "try again later") instead of a bare connection
// failure; the socket is then closed at once.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import type { OriginPolicy } from '../http/origin.ts';
import { CLOSE, closeSoon } from './messages.ts';

export interface UpgradeOptions {
  /** Upgrade path, e.g. `/obv/ws`. */
  path: string;
  originPolicy: OriginPolicy;
  /** The client address of an upgrade request (honouring `trust proxy`). */
  addressOf: (req: IncomingMessage) => string;
  /** Whether one more socket from `address` is over a cap (per client, or in all). */
  full: (address: string) => boolean;
  /** A socket within the caps, from `address`. */
  onConnection: (socket: WebSocket, address: string) => void;
}

function refuse(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}

/**
 * The `upgrade` listener of `server`. Upgrades to other paths are left to other listeners; when there are
 * none they are refused with 404.
 */
export function upgradeHandler(
  server: Server,
  wss: WebSocketServer,
  options: UpgradeOptions,
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    const pathname = (req.url ?? '').split('?')[0];
    if (pathname !== options.path) {
      // Another 'upgrade' listener (a dev server's HMR, another app) may own this path.
      if (server.listenerCount('upgrade') <= 1) refuse(socket, 404, 'Not Found');
      return;
    }
    socket.on('error', () => socket.destroy());
    const origin = req.headers.origin;
    if (!origin || !options.originPolicy.check(origin, 'websocket')) {
      refuse(socket, 403, 'Forbidden');
      return;
    }
    const address = options.addressOf(req);
    const full = options.full(address);
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (full) closeSoon(ws, CLOSE.tryAgainLater, 'too many connections');
      else options.onConnection(ws, address);
    });
  };
}
