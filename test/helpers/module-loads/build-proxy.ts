// Child process: builds a proxy from the public entry point (with OBV_REDIS_URL when given as argv[2]),
// serves one request, closes it and exits.
import express from 'express';
import { createObvProxy } from '../../../proxy/index.ts';
import { SANDBOX_WEBHOOK_SECRET } from '../webhooks.ts';

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
});
const app = express().use(proxy.mountPath, proxy.router);
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const { port } = server.address() as { port: number };
await fetch(`http://127.0.0.1:${port}/obv/healthz`);
server.close();
await proxy.close();
