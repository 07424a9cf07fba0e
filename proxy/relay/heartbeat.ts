// The heartbeat (ws's README FAQ): every socket is pinged each period, and one that did not answer the
// last ping is cut, so a browser that vanished (a closed laptop, a dropped network) frees its socket.
import type { WebSocket } from 'ws';

/** What the heartbeat sees of a socket: the socket, and whether it answered since the last ping. */
export interface Beating {
  socket: WebSocket;
  isAlive: boolean;
}

/** Pings `sockets` every `intervalMs`; returns the function that stops it. A pong sets `isAlive` (the relay's listener). */
export function startHeartbeat(sockets: Iterable<Beating>, intervalMs: number): () => void {
  const heartbeat = setInterval(() => {
    for (const client of sockets) {
      if (!client.isAlive) {
        client.socket.terminate();
        continue;
      }
      client.isAlive = false;
      client.socket.ping();
    }
  }, intervalMs);
  heartbeat.unref();
  return () => clearInterval(heartbeat);
}
