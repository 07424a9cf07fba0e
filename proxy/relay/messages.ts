// The WebSocket protocol (CONTRACTS §2): what a client may send, what the server sends.
import type { WebSocket } from 'ws';
import { z } from 'zod';
import { RELAY_CLOSE_GRACE_MS } from '../config/limits.ts';
import type { BrowserOutcome } from '../storage/result-bus.ts';
import type { SessionState } from '../storage/sessions.ts';

export const SubscribeMessage = z.object({
  type: z.literal('subscribe'),
  sessionId: z.string().min(1).max(128),
});
export type SubscribeMessage = z.infer<typeof SubscribeMessage>;

export type ServerMessage =
  | { type: 'subscribed'; sessionId: string; state: SessionState }
  | { type: 'state'; sessionId: string; state: SessionState }
  | { type: 'result'; sessionId: string; outcome: BrowserOutcome }
  | { type: 'expired'; sessionId: string }
  | { type: 'error'; code: 'unknown_session' | 'bad_message'; message: string };

/**
 * Close codes: 1000 after a terminal message; 1001 the server is shutting down (reconnect, another
 * instance will answer); 1013 too many connections (from this address or in total: try again later);
 * 4400 bad message, 4404 unknown session, 4408 no subscribe in time, 4409 replaced by a newer socket of
 * the same session.
 */
export const CLOSE = {
  done: 1000,
  goingAway: 1001,
  tryAgainLater: 1013,
  badMessage: 4400,
  unknownSession: 4404,
  subscribeTimeout: 4408,
  replaced: 4409,
} as const;

/** Closes with `code`, and cuts the socket if the peer does not finish the close handshake soon. */
export function closeSoon(socket: WebSocket, code: number, reason: string): void {
  socket.close(code, reason);
  setTimeout(() => socket.terminate(), RELAY_CLOSE_GRACE_MS).unref();
}
