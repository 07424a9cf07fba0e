// A merchant's events endpoint for tests: verifies each delivery with the `standardwebhooks` library
// (as a merchant's server would), records it, and answers as the test says: 2xx, an error, a dropped
// connection, a delay, or nothing at all. It can also go down (connections refused) and come back on
// the same port.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** Secrets for the proxy's OBV_EVENTS_SECRETS in tests (sandbox mode: any length). */
export const EVENTS_SECRET = `whsec_${Buffer.from('merchant-events-secret-for-tests-0001').toString('base64')}`;
export const ROTATED_EVENTS_SECRET = `whsec_${Buffer.from('merchant-events-secret-for-tests-0002').toString('base64')}`;

export interface ReceivedEvent {
  id: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}

export interface Delivery {
  headers: Record<string, string>;
  body: string;
  /** The event, when the body verified; undefined when the signature did not. */
  event: ReceivedEvent | undefined;
  /** What the endpoint did with it. */
  answer: Answer;
}

/** `ok` → 204; `fail` → 500; `drop` → the connection is cut after reading (the event arrived, no answer); `hang` → never answers. */
export type Answer = 'ok' | 'fail' | 'drop' | 'hang' | { delayMs: number };

export interface MerchantEndpoint {
  url: string;
  deliveries: Delivery[];
  /** Verified events in arrival order, repeats included. */
  readonly events: ReceivedEvent[];
  /** Decides each answer (default: always `ok`). */
  answer: (delivery: Omit<Delivery, 'answer'>) => Answer;
  /** Stops listening: deliveries meet a refused connection until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Resolves once `count` distinct event ids verified and were answered 2xx, now or after a delay (at most `timeoutMs`). */
  waitForDistinct(count: number, timeoutMs?: number): Promise<ReceivedEvent[]>;
  close(): Promise<void>;
}

export async function startMerchantEndpoint(secret = EVENTS_SECRET): Promise<MerchantEndpoint> {
  const webhook = new Webhook(secret);
  const deliveries: Delivery[] = [];
  const hanging = new Set<http.ServerResponse>();
  let port = 0;
  let server: http.Server;
  const endpoint: MerchantEndpoint = {
    url: '',
    deliveries,
    get events() {
      return deliveries.flatMap((delivery) => (delivery.event ? [delivery.event] : []));
    },
    answer: () => 'ok',
    async down() {
      for (const res of hanging) res.destroy();
      hanging.clear();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
    async up() {
      server = createServer();
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    async waitForDistinct(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const answered = new Map<string, ReceivedEvent>();
        for (const delivery of deliveries)
          if (delivery.event && (delivery.answer === 'ok' || typeof delivery.answer === 'object'))
            answered.set(delivery.event.id, delivery.event);
        if (answered.size >= count) return [...answered.values()];
        if (Date.now() > deadline)
          throw new Error(`only ${answered.size} of ${count} events delivered within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      if (server.listening) await endpoint.down();
    },
  };

  function createServer(): http.Server {
    return http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)]));
        let event: ReceivedEvent | undefined;
        try {
          event = webhook.verify(body, headers) as ReceivedEvent;
        } catch {
          event = undefined;
        }
        const answer = event ? endpoint.answer({ headers, body, event }) : 'fail';
        deliveries.push({ headers, body, event, answer });
        if (answer === 'ok') res.writeHead(204).end();
        else if (answer === 'fail') res.writeHead(event ? 500 : 400).end();
        else if (answer === 'drop') res.destroy();
        else if (answer === 'hang') hanging.add(res);
        else setTimeout(() => res.writeHead(204).end(), answer.delayMs);
      });
    });
  }

  server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
  endpoint.url = `http://127.0.0.1:${port}/obv-events`;
  return endpoint;
}
