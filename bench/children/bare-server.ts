// The baselines' server: the least a relay, a notification intake and a start forwarder can do with
// node:http and ws, and nothing more (no framework, no validation beyond the signature, no heartbeat,
// no logs). Each figure of the proxy is set beside this server's figure measured in the same run.
// With BENCH_UPSTREAM_URL, POST /verifications forwards starts to that provider's endpoint 2, the
// purchase read from a Map by the body's link token.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { SequentialClient } from '../lib/http-client.ts';
import { cpuTimeMs, settledMemory } from '../lib/memory.ts';
import { serveRpc } from '../lib/rpc.ts';
import { hasValidSignature } from '../lib/notifications.ts';
import type { ServerAddress } from '../lib/servers.ts';
import { fetchToken, postVerification, purchase, verificationRequest, type Purchase } from '../lib/upstream.ts';

const subscribers = new Map<string, Set<WebSocket>>();
const outcomes = new Map<string, unknown>();
const seenWebhookIds = new Set<string>();
/** The link sessions: purchases by link token. */
const linkSessions = new Map<string, Purchase>();

function publish(sessionId: string, outcome: unknown): void {
  const sockets = subscribers.get(sessionId);
  if (!sockets) return;
  const message = JSON.stringify({ type: 'result', sessionId, outcome });
  for (const socket of sockets) socket.send(message);
}

function outcomeOf(notification: { account?: Record<string, string> }): unknown {
  const account = notification.account ?? {};
  return {
    status: 'success',
    accountToken: account.accountToken,
    accountLabel: account.accountLabel,
    fiName: account.fiName,
    fiAccountType: account.fiAccountType,
  };
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

const upstreamUrl = process.env.BENCH_UPSTREAM_URL;
const upstream = upstreamUrl ? new SequentialClient(upstreamUrl, 64) : undefined;
let token: Promise<string> | undefined;

/** Forwarding floor: endpoint 2 with a token fetched once, the consumerUrl handed back. */
async function forwardStart(body: string, response: http.ServerResponse): Promise<void> {
  if (!upstream) throw new Error('BENCH_UPSTREAM_URL is not set');
  token ??= fetchToken(upstream);
  const linkSession = linkSessions.get((JSON.parse(body) as { linkToken: string }).linkToken);
  if (!linkSession) {
    response.writeHead(404).end();
    return;
  }
  const ref = randomBytes(16).toString('base64url');
  const consumerUrl = await postVerification(upstream, await token, verificationRequest(linkSession, origin, ref));
  const session = { sessionId: ref, consumerUrl, expiresAt: new Date(Date.now() + 1_800_000).toISOString() };
  response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(session));
}

const server = http.createServer(async (request, response) => {
  try {
    const [, route, id] = (request.url ?? '').split('/');
    const body = await readBody(request);
    if (request.method === 'POST' && route === 'verifications') {
      await forwardStart(body, response);
    } else if (request.method === 'POST' && route === 'relay' && id) {
      // Relay floor: parse and forward, no authentication.
      publish(id, outcomeOf(JSON.parse(body)));
      response.writeHead(204).end();
    } else if (request.method === 'POST' && route === 'webhook' && id) {
      // Intake floor: the same Standard Webhooks check, de-dup, store, publish.
      if (!hasValidSignature(body, request.headers)) {
        response.writeHead(401).end();
        return;
      }
      const webhookId = String(request.headers['webhook-id']);
      if (!seenWebhookIds.has(webhookId)) {
        seenWebhookIds.add(webhookId);
        const outcome = outcomeOf(JSON.parse(body));
        outcomes.set(id, outcome);
        publish(id, outcome);
      }
      response.writeHead(204).end();
    } else {
      response.writeHead(404).end();
    }
  } catch {
    response.writeHead(400).end();
  }
});

const wss = new WebSocketServer({ noServer: true });
server.on('upgrade', (request, socket, head) => {
  wss.handleUpgrade(request, socket, head, (ws) => {
    ws.on('error', () => ws.terminate());
    ws.once('message', (data) => {
      try {
        const { sessionId } = JSON.parse(String(data)) as { sessionId: string };
        let sockets = subscribers.get(sessionId);
        if (!sockets) subscribers.set(sessionId, (sockets = new Set()));
        sockets.add(ws);
        ws.once('close', () => sockets.delete(ws));
        ws.send(JSON.stringify({ type: 'subscribed', sessionId, state: 'pending' }));
      } catch {
        ws.close(4400);
      }
    });
  });
});

await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

serveRpc({
  address: () => {
    return {
      origin,
      wsUrl: `${origin.replace('http', 'ws')}/ws`,
      relayPrefix: '/relay/',
      relaySigned: false,
      intakePrefix: '/webhook/',
    } satisfies ServerAddress;
  },
  // The bare server keeps no session records: any id may be subscribed and notified.
  prepareSessions: ({ count }: { count: number }) =>
    Array.from({ length: count }, () => {
      const sessionId = randomBytes(16).toString('base64url');
      return { sessionId, ref: sessionId };
    }),
  prepareLinkSessions: ({ count }: { count: number }) =>
    Array.from({ length: count }, (_, index) => {
      const linkToken = `lt_${randomBytes(24).toString('base64url')}`;
      linkSessions.set(linkToken, purchase(index));
      return linkToken;
    }),
  memory: () => settledMemory(),
  cpuTime: () => cpuTimeMs(),
});
