// A small WebSocket client for the relay: collects messages, waits for the next one (bounded), and
// exposes the close code.
import WebSocket from 'ws';

export interface RelayMessage {
  type: string;
  [key: string]: unknown;
}

export interface RelayClient {
  socket: WebSocket;
  /** Every JSON message received so far. */
  messages: RelayMessage[];
  /** Resolves with the first message (already received or future) matching `predicate`, after index `from`. */
  next(predicate?: (message: RelayMessage) => boolean, timeoutMs?: number): Promise<RelayMessage>;
  /** Resolves with the close code and reason. */
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
  close(): void;
}

/** `http://host/obv` → `ws://host/obv/ws`. */
export function relayUrl(proxyBaseUrl: string): string {
  return `${proxyBaseUrl.replace(/^http/, 'ws')}/ws`;
}

/** Opens a socket; resolves once open, rejects on an HTTP refusal (`Unexpected server response: 403`). */
export async function connectRelay(url: string, options: { origin?: string } = {}): Promise<RelayClient> {
  const socket = new WebSocket(url, options.origin === undefined ? {} : { origin: options.origin });
  const messages: RelayMessage[] = [];
  const waiters = new Set<() => void>();
  socket.on('message', (data) => {
    messages.push(JSON.parse(String(data)) as RelayMessage);
    for (const wake of waiters) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.on('error', () => undefined);
  let cursor = 0;
  return {
    socket,
    messages,
    closed,
    send: (message) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    close: () => socket.close(),
    next(predicate = () => true, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          while (cursor < messages.length) {
            const message = messages[cursor++]!;
            if (predicate(message)) {
              cleanup();
              resolve(message);
              return;
            }
          }
          if (socket.readyState === WebSocket.CLOSED) {
            cleanup();
            reject(new Error(`socket closed before the expected message; got ${JSON.stringify(messages)}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no matching message within ${timeoutMs} ms; got ${JSON.stringify(messages)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** Opens a socket, subscribes to `sessionId` and waits for `subscribed`. */
export async function subscribedRelay(url: string, origin: string, sessionId: string): Promise<RelayClient> {
  const client = await connectRelay(url, { origin });
  client.send({ type: 'subscribe', sessionId });
  await client.next((message) => message.type === 'subscribed');
  return client;
}
