// Child process: builds a proxy from the public entry point (with OBV_REDIS_URL when given as argv[2]),
// serves one request, closes it, writes the CommonJS modules the process loaded (one path a line) to
// OBV_MODULE_LOAD_LOG and exits. ioredis and rate-limit-redis are CommonJS, so require's cache lists them.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import express from 'express';
import { createObvProxy } from '../../proxy/index.ts';
import { SANDBOX_WEBHOOK_SECRET } from './webhooks.ts';

const proxy = createObvProxy({
  baseUrl: 'http://127.0.0.1:9',
  clientId: 'sandbox_client',
  clientSecret: 'sandbox_secret',
  publicUrl: 'http://127.0.0.1:9',
  webhookSecret: SANDBOX_WEBHOOK_SECRET,
  merchantId: 'sandbox-merchant',
  sandbox: true,
  logLevel: 'silent',
  defaultMetrics: false,
  redisUrl: process.argv[2],
  // Without Redis: memory, so the child writes no data directory.
  ...(process.argv[2] ? {} : { storage: 'memory' as const }),
});
const app = express().use(proxy.mountPath, proxy.router);
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const { port } = server.address() as { port: number };
await fetch(`http://127.0.0.1:${port}/obv/healthz`);
server.close();
await proxy.close();

const log = process.env.OBV_MODULE_LOAD_LOG;
if (log) writeFileSync(log, Object.keys(createRequire(import.meta.url).cache).join('\n'));
