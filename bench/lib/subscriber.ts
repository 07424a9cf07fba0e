// The measuring browser: one fresh socket per sample, subscribed to its own session, timing how long a
// notification takes to come out of the socket.
import WebSocket from 'ws';
import type { SequentialClient } from './http-client.ts';
import { signedHeaders, successNotification } from './notifications.ts';
import type { PreparedSession, ServerAddress } from './servers.ts';
import { nowMs } from './stats.ts';

const STEP_TIMEOUT_MS = 10_000;

/**
 * Opens a socket and resolves once the server acknowledged the subscription to `sessionId`. The socket
 * keeps an error listener, so a later reset never crashes the process.
 */
export function subscribe(address: Pick<ServerAddress, 'wsUrl' | 'origin'>, sessionId: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(address.wsUrl, { origin: address.origin, handshakeTimeout: STEP_TIMEOUT_MS });
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`no subscription acknowledgement from ${address.wsUrl} within ${STEP_TIMEOUT_MS} ms`));
    }, STEP_TIMEOUT_MS);
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('open', () => socket.send(JSON.stringify({ type: 'subscribe', sessionId })));
    socket.once('message', (data) => {
      clearTimeout(timer);
      if ((JSON.parse(String(data)) as { type?: string }).type === 'subscribed') resolve(socket);
      else reject(new Error(`subscription refused: ${String(data)}`));
    });
  });
}

export interface RelayTiming {
  /** Notification POST sent → result message out of the socket. */
  sendToReceive: number;
  /** Whether the result was out of the socket before the POST was answered (the provider acknowledged). */
  resultBeforeAnswer: boolean;
}

/** Sends the session's notification and times the result's arrival on `socket`. */
export function timeRelay(
  socket: WebSocket,
  client: SequentialClient,
  address: ServerAddress,
  session: PreparedSession,
  webhookId: string,
  index: number,
): Promise<RelayTiming> {
  const body = successNotification(index);
  const headers = address.relaySigned ? signedHeaders(webhookId, body) : { 'content-type': 'application/json' };
  return new Promise((resolve, reject) => {
    let received: number | undefined;
    let answered: number | undefined;
    const timer = setTimeout(
      () => reject(new Error(`no result on the socket within ${STEP_TIMEOUT_MS} ms`)),
      STEP_TIMEOUT_MS,
    );
    const finish = (): void => {
      if (received === undefined || answered === undefined) return;
      clearTimeout(timer);
      resolve({ sendToReceive: received - sent, resultBeforeAnswer: received <= answered });
    };
    socket.on('message', (data) => {
      const at = nowMs();
      if ((JSON.parse(String(data)) as { type?: string }).type !== 'result') return;
      received = at;
      finish();
    });
    const sent = nowMs();
    client.request('POST', `${address.relayPrefix}${session.ref}`, body, headers).then((response) => {
      if (response.status >= 300) {
        clearTimeout(timer);
        reject(new Error(`notification answered ${response.status}: ${response.body.slice(0, 300)}`));
        return;
      }
      answered = nowMs();
      finish();
    }, reject);
  });
}
