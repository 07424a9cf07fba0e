// http.Server options for a checkout, shared by `npm start` (server.ts) and merchants who create their
// own server for the proxy (`http.createServer(serverOptions(config), app)`, exported by the package).
import type http from 'node:http';
import type { ProxyConfig } from '../config/schema.ts';

/** http.Server options for a checkout: a shopper's request is small, so a slow one is an attack. */
export function serverOptions(config: Pick<ProxyConfig, 'headersTimeoutMs' | 'requestTimeoutMs'>): http.ServerOptions {
  const requestTimeout = config.requestTimeoutMs;
  // Node requires headersTimeout ≤ requestTimeout; the check interval bounds how late a time-out fires.
  const headersTimeout = Math.min(config.headersTimeoutMs, requestTimeout);
  return { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(1_000, headersTimeout) };
}
