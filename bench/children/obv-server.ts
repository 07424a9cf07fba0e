// obv-link's proxy as `npm start` runs it: an Express app with the proxy mounted at /obv and the relay on
// the same http.Server, the in-memory session backend, logs at `info` (to /dev/null: the bench starts
// this child with stdout ignored, so logging costs what it costs without flooding the terminal).
// BENCH_UPSTREAM_URL points it at a sandbox provider; without one it never calls upstream.
// BENCH_PAYMENTS=1 adds what POST /transactions needs (the merchant API key, the gateway's app).
// BENCH_STORAGE (with BENCH_DATA_DIR, BENCH_DATABASE_URL, BENCH_REDIS_URL) picks the session storage (lib/storage.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createLogger, createObvProxy, createOutboxCodec } from '../../proxy/index.ts';
import { SANDBOX_SEALING_KEY } from '../../proxy/config/sealing-keys.ts';
import { createStorage } from '../../proxy/storage/create-storage.ts';
import { type StorageKind } from '../../proxy/storage/storage.ts';
import { newId } from '../../proxy/common/ids.ts';
import { cpuTimeMs, settledMemory } from '../lib/memory.ts';
import { BENCH_MOUNT_PATH as MOUNT_PATH, benchPaymentOptions, benchProxyOptions } from '../lib/obv-proxy-options.ts';
import { serveRpc } from '../lib/rpc.ts';
import type { PreparedSession, ServerAddress } from '../lib/servers.ts';
import { storageFromEnv } from '../lib/storage.ts';
import { purchase } from '../lib/upstream.ts';

const SESSION_TTL_MS = 3_600_000;

const logger = createLogger((process.env.BENCH_LOG_LEVEL ?? 'info') as Parameters<typeof createLogger>[0]);
const storage = storageFromEnv(process.env);
const app = express();
app.disable('x-powered-by');
const server = http.createServer(app);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/**
 * Where the proxy keeps its state, and the store prepareSessions writes into (the same one): this child
 * builds the storage `--storage` names (createStorage: memory, SQLite in BENCH_DATA_DIR, PostgreSQL on
 * BENCH_DATABASE_URL, Redis on BENCH_REDIS_URL) and hands it to the proxy.
 */
const kind = (storage?.storage ?? 'memory') as StorageKind;
const ownBackend = createStorage({
  kind,
  logger,
  dataDir: storage?.dataDir,
  databaseUrl: storage?.databaseUrl,
  redisUrl: storage?.redisUrl,
  // As createObvProxy builds its own: events sealed (the bench runs in sandbox mode, under its published key).
  outboxCodec: createOutboxCodec([SANDBOX_SEALING_KEY]),
  redisMinReplicas: storage?.redisMinReplicas === undefined ? undefined : Number(storage.redisMinReplicas),
});
const storeInUse = kind;

const proxy = createObvProxy({
  ...benchProxyOptions(origin, process.env.BENCH_UPSTREAM_URL),
  ...(process.env.BENCH_PAYMENTS === '1' ? benchPaymentOptions(process.env.BENCH_UPSTREAM_URL) : {}),
  logger,
  backend: ownBackend,
});
app.use(proxy.mountPath, proxy.router);
proxy.attachRelay(server);

/** Sessions as the start route leaves them, written straight into the store (no upstream call). */
async function prepareSessions({ count }: { count: number }): Promise<PreparedSession[]> {
  const backend = ownBackend;
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

/** Link sessions made in-process, as `proxy.createLinkSession` in a merchant's Node server. */
async function prepareLinkSessions({ count }: { count: number }): Promise<string[]> {
  const linkTokens: string[] = [];
  for (let index = 0; index < count; index++)
    linkTokens.push((await proxy.createLinkSession(purchase(index))).linkToken);
  return linkTokens;
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
  prepareLinkSessions,
  /** The storage asked for and the store the proxy actually used. */
  storage: () => ({ asked: storage?.storage ?? 'memory', store: storeInUse }),
  /** SQLite: the durability barrier's fsyncs and the acknowledgements that waited (null elsewhere). */
  syncStats: () => ownBackend.syncStats?.() ?? null,
  memory: () => settledMemory(),
  cpuTime: () => cpuTimeMs(),
});
