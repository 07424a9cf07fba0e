// The chaos run's merchant: an events endpoint that verifies each delivery (standardwebhooks), applies an
// event's effect once per event id, and misbehaves on purpose: some deliveries fail (500, no effect),
// some are dropped after the effect (the connection is cut: the proxy cannot know it arrived), some are
// answered late (past the proxy's attempt time-out, after the effect). The proxies must still bring every
// session's terminal event, and the de-duplication by id must keep every event to one effect.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { Webhook } from 'standardwebhooks';

export const CHAOS_EVENTS_SECRET = `whsec_${Buffer.from('chaos-run-merchant-events-secret-0001').toString('base64')}`;
/** Each delivery's fate, by probability (the rest are answered 204 at once). */
const FATE = { fail: 0.1, drop: 0.1, delay: 0.1 };
/** Up to this late: past the instances' 2.5 s attempt time-out for about a third of the delayed answers. */
const MAX_DELAY_MS = 4_000;

export interface ChaosEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

export interface ChaosMerchant {
  url: string;
  /** Event id → the event, once its effect was applied (the merchant's "database"). */
  readonly effects: Map<string, ChaosEvent>;
  /** Deliveries of an id whose effect was already applied (ignored by the merchant, as it should). */
  readonly duplicates: number;
  /** Deliveries whose signature did not verify (must stay 0). */
  readonly unverified: number;
  close(): Promise<void>;
}

export async function startChaosMerchant(random: () => number): Promise<ChaosMerchant> {
  const webhook = new Webhook(CHAOS_EVENTS_SECRET);
  const effects = new Map<string, ChaosEvent>();
  let duplicates = 0;
  let unverified = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event: ChaosEvent;
      try {
        event = webhook.verify(
          body,
          Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        ) as ChaosEvent;
      } catch {
        unverified++;
        res.writeHead(400).end();
        return;
      }
      const roll = random();
      if (roll < FATE.fail) {
        res.writeHead(500).end();
        return;
      }
      // The effect, once per id: what a merchant's handler does before answering.
      if (effects.has(event.id)) duplicates++;
      else effects.set(event.id, event);
      if (roll < FATE.fail + FATE.drop) res.destroy();
      else if (roll < FATE.fail + FATE.drop + FATE.delay)
        setTimeout(() => res.writeHead(204).end(), Math.floor(random() * MAX_DELAY_MS));
      else res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    effects,
    get duplicates() {
      return duplicates;
    },
    get unverified() {
      return unverified;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
