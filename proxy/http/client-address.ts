// The client address of a raw request (the WebSocket upgrade, which Express never sees), decided the
// way Express decides `req.ip`: walk X-Forwarded-For from the nearest hop and stop at the first address
// `trust proxy` does not trust (proxy-addr's algorithm). With nothing trusted it is the socket's peer.
import type { IncomingMessage } from 'node:http';

/** Express's compiled `trust proxy` (`app.get('trust proxy fn')`). */
export type TrustFunction = (address: string, hop: number) => boolean;

/** `::ffff:1.2.3.4` → `1.2.3.4`. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

export function clientAddress(req: IncomingMessage, trust: TrustFunction | undefined): string {
  const peer = req.socket.remoteAddress ?? '';
  const forwarded = req.headers['x-forwarded-for'];
  if (!trust || !forwarded) return plainAddress(peer);
  const hops = [peer, ...String(forwarded).split(',').map((hop) => hop.trim()).reverse()];
  let index = 0;
  while (index < hops.length - 1 && trust(hops[index] ?? '', index)) index++;
  return plainAddress(hops[index] ?? peer);
}
