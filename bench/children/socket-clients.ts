// A pool of idle subscribed WebSocket clients, kept in its own process so that the server under test
// is measured alone and the open-file limit applies to each side separately.
import WebSocket from 'ws';
import { serveRpc } from '../lib/rpc.ts';
import { subscribe } from '../lib/subscriber.ts';

interface OpenParams {
  wsUrl: string;
  origin: string;
  sessionIds: string[];
  /** Handshakes in flight at once: more overflows the server's listen backlog. */
  concurrency: number;
  timeoutMs: number;
}

const sockets: WebSocket[] = [];

async function open(params: OpenParams): Promise<{ opened: number; failed: number; firstError?: string; ms: number }> {
  const started = Date.now();
  const deadline = started + params.timeoutMs;
  let next = 0;
  let opened = 0;
  let failed = 0;
  let firstError: string | undefined;
  const worker = async (): Promise<void> => {
    while (next < params.sessionIds.length && Date.now() < deadline) {
      const sessionId = params.sessionIds[next++] as string;
      try {
        sockets.push(await subscribe(params, sessionId));
        opened++;
      } catch (error) {
        failed++;
        firstError ??= String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: params.concurrency }, worker));
  return { opened, failed, ...(firstError ? { firstError } : {}), ms: Date.now() - started };
}

serveRpc({
  open: (params: OpenParams) => open(params),
  count: () => sockets.filter((socket) => socket.readyState === WebSocket.OPEN).length,
  closeAll: () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    return true;
  },
});
