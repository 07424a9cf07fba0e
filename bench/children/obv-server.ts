// obv-link's proxy as `npm start` runs it: an Express app with the proxy mounted at /obv and the relay on
// the same http.Server, the in-memory session backend, logs at `info` (to /dev/null: the bench starts
// this child with stdout ignored, so logging costs what it costs without flooding the terminal).
// BENCH_UPSTREAM_URL points it at a sandbox provider; without one it never calls upstream.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createLogger, createObvProxy } from '../../proxy/index.ts';
import { createSessionBackend } from '../../proxy/sessions/create-backend.ts';
import { newId } from '../../proxy/sessions/ids.ts';
import { cpuTimeMs, settledMemory } from '../lib/memory.ts';
import { WEBHOOK_SECRET } from '../lib/notifications.ts';
import { serveRpc } from '../lib/rpc.ts';
import type { PreparedSession, ServerAddress } from '../lib/servers.ts';

const MOUNT_PATH = '/obv';
const SESSION_TTL_MS = 3_600_000;

const logger = createLogger((process.env.BENCH_LOG_LEVEL ?? 'info') as Parameters<typeof createLogger>[0]);
const backend = createSessionBackend({ logger });
const app = express();
app.disable('x-powered-by');
const server = http.createServer(app);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const proxy = createObvProxy({
  baseUrl: process.env.BENCH_UPSTREAM_URL ?? 'http://127.0.0.1:9',
  clientId: 'sandbox_client',
  clientSecret: 'sandbox_secret',
  publicUrl: origin,
  mountPath: MOUNT_PATH,
  webhookSecret: WEBHOOK_SECRET,
  merchantId: 'bench-merchant',
  sandbox: true,
  // The bench sends thousands of starts from one address: the per-IP limit would stop it.
  rateLimit: 0,
  // Every idle socket comes from 127.0.0.1: the per-address cap (default 64) would refuse all but 64.
  maxSocketsPerClient: 1_000_000,
  logger,
  sessionStore: backend.sessionStore,
  resultBus: backend.resultBus,
});
app.use(proxy.mountPath, proxy.router);
proxy.attachRelay(server);

/** Sessions as the start route leaves them, written straight into the store (no upstream call). */
async function prepareSessions({ count }: { count: number }): Promise<PreparedSession[]> {
  const now = Date.now();
  const sessions: PreparedSession[] = [];
  for (let index = 0; index < count; index++) {
    const session = { sessionId: newId(), ref: newId() };
    await backend.sessionStore.create({
      sessionId: session.sessionId,
      notificationRef: session.ref,
      consumerUrl: `${origin}/consumer/bench-${index}`,
      state: 'pending',
      createdAt: now,
      expiresAt: now + SESSION_TTL_MS,
      merchantUserId: `user-${index}`,
      merchantTransactionId: `txn-${index}`,
    });
    sessions.push(session);
  }
  return sessions;
}

serveRpc({
  address: () =>
    ({
      origin,
      wsUrl: `${origin.replace('http', 'ws')}${MOUNT_PATH}/ws`,
      relayPrefix: `${MOUNT_PATH}/notifications/`,
      relaySigned: true,
      intakePrefix: `${MOUNT_PATH}/notifications/`,
    }) satisfies ServerAddress,
  prepareSessions,
  memory: () => settledMemory(),
  cpuTime: () => cpuTimeMs(),
});
