// Several proxy instances for the multi-instance tests: each a real http.Server on port 0 running
// createObvProxy with OBV_REDIS_URL, a TCP round-robin "load balancer" in front, a WebSocket browser
// stand-in, and the consumer's clicks on the sandbox bank page.
import { createServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import express from 'express';
import type { Logger } from 'pino';
import { WebSocket } from 'ws';
import { DEFAULT_WEBHOOK_SECRET, type RunningProvider } from '../../../sandbox/index.ts';
import { createObvProxy, type ObvProxy, type ObvProxyOptions, type Storage } from '../../../proxy/index.ts';
import { eventually } from './support.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

export interface ProxyInstance {
  url: string;
  proxy: ObvProxy;
  /** Stops the instance abruptly: open connections and sockets are cut, nothing is drained. */
  kill(): Promise<void>;
}

function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/**
 * One proxy instance on Redis. `publicUrl` is what the provider's notifications and the return page
 * use: the load balancer's URL in a cluster, else the instance's own.
 */
export async function startInstance(options: {
  provider: RunningProvider;
  /** OBV_REDIS_URL; leave it out to run on what `extra` names (OBV_DATABASE_URL: test/node/postgres/). */
  redisUrl?: string;
  /** A storage built by the test (e.g. with a bus that fails on purpose), used instead of redisUrl's. */
  backend?: Storage;
  publicUrl?: string;
  /** Starts per client IP per minute (OBV_RATE_LIMIT). */
  rateLimit?: number;
  /** OBV_REDIS_PREFIX; default `obv:`. */
  redisPrefix?: string;
  /** Where the instance logs; default nowhere. */
  logger?: Logger;
  /** Any other options (merchant events' URL, secrets and timings, …). */
  extra?: Partial<ObvProxyOptions>;
}): Promise<ProxyInstance> {
  const app = express();
  const server = createServer(app);
  const url = `http://127.0.0.1:${await listen(server)}`;
  const proxy = createObvProxy({
    baseUrl: options.provider.url,
    clientId: 'sandbox_client',
    clientSecret: 'sandbox_secret',
    publicUrl: options.publicUrl ?? url,
    // The test's page talks to the instance directly; behind the balancer its origin is not the
    // public one, so it is allowed explicitly (the Host header never makes an origin allowed).
    allowedOrigins: [url],
    webhookSecret: DEFAULT_WEBHOOK_SECRET,
    merchantId: 'merchant-1',
    sandbox: true,
    redisUrl: options.redisUrl,
    logLevel: 'silent',
    // As behind a real balancer: X-Forwarded-For names the client (tests pick distinct ones).
    trustProxy: 'loopback',
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
    ...(options.redisPrefix === undefined ? {} : { redisPrefix: options.redisPrefix }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...options.extra,
    ...(options.backend ? { backend: options.backend } : {}),
  });
  app.use(proxy.mountPath, proxy.router);
  proxy.attachRelay(server);
  let killed = false;
  return {
    url,
    proxy,
    async kill() {
      if (killed) return;
      killed = true;
      server.closeAllConnections();
      await Promise.all([new Promise((resolve) => server.close(resolve)), proxy.close()]);
    },
  };
}

/** The purchase the instances' merchant server names in each link session. */
export const CHECKOUT = {
  merchantUserId: 'user-42',
  merchantTransactionId: 'order-1001',
  amount: '49.99',
  currency: 'USD',
  consumer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
};

/** A new link session's token, made on `instance` as the merchant's server does (stored in Redis: any instance takes it). */
export async function newLinkToken(instance: ProxyInstance): Promise<string> {
  return (await instance.proxy.createLinkSession(CHECKOUT)).linkToken;
}

/** POST /verifications on `instance` as the checkout page does, with `linkToken` (default: a new link session's). */
export async function postVerification(
  instance: ProxyInstance,
  headers: Record<string, string> = {},
  linkToken?: string,
): Promise<Response> {
  return fetch(`${instance.url}/obv/verifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: instance.url, ...headers },
    body: JSON.stringify({ linkToken: linkToken ?? (await newLinkToken(instance)) }),
  });
}

/** Starts a verification on `instance`; returns the proxy's answer. */
export async function startVerification(instance: ProxyInstance): Promise<{ sessionId: string; consumerUrl: string }> {
  const response = await postVerification(instance);
  if (response.status !== 201) throw new Error(`start failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as { sessionId: string; consumerUrl: string };
}

/** The consumer signs in at the sandbox bank; the provider then sends its notification. */
export async function signInAtBank(consumerUrl: string, username = 'user_good', password = 'pass_good'): Promise<void> {
  const url = new URL(consumerUrl);
  const form = new URLSearchParams({ t: url.searchParams.get('t') ?? '', username, password, action: 'signin' });
  const response = await fetch(`${url.origin}${url.pathname}`, { method: 'POST', redirect: 'manual', body: form });
  if (response.status !== 303) throw new Error(`bank sign-in failed: ${response.status}`);
}

export interface BrowserSocket {
  /** Every message the server sent, parsed. */
  messages: { type: string; [key: string]: unknown }[];
  /** Resolves with the first message of `type` (waits at most 10 s). */
  next(type: string): Promise<{ type: string; [key: string]: unknown }>;
  closed: Promise<void>;
  close(): void;
}

/** A browser's WebSocket to `instance`, subscribed to `sessionId`. */
export async function subscribe(instance: ProxyInstance, sessionId: string): Promise<BrowserSocket> {
  const socket = new WebSocket(`${instance.url.replace('http', 'ws')}/obv/ws`, { origin: instance.url });
  const messages: BrowserSocket['messages'] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as BrowserSocket['messages'][number]));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ type: 'subscribe', sessionId }));
  const browser: BrowserSocket = {
    messages,
    next: (type) => eventually(() => messages.find((m) => m.type === type)),
    closed,
    close: () => socket.close(),
  };
  await browser.next('subscribed');
  return browser;
}

/** POST /sessions/lookup on `instance`. */
export async function readSession(
  instance: ProxyInstance,
  sessionId: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await lookupSession(`${instance.url}/obv`, sessionId, { origin: instance.url });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export interface LoadBalancer {
  url: string;
  close(): Promise<void>;
}

/**
 * A TCP load balancer: each connection goes to the next backend in turn, skipping ones that refuse
 * the connection (a dead instance), like a balancer with passive health checks. No stickiness.
 */
export async function startLoadBalancer(backends: () => string[]): Promise<LoadBalancer> {
  let turn = 0;
  const open = new Set<Socket>();
  const server = createTcpServer((client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    client.on('error', () => undefined);
    client.pause();
    const urls = backends();
    const start = turn++;
    const tryBackend = (attempt: number): void => {
      if (attempt >= urls.length) {
        client.destroy();
        return;
      }
      const target = new URL(urls[(start + attempt) % urls.length] ?? '');
      const upstream = connect(Number(target.port), target.hostname);
      upstream.once('error', () => tryBackend(attempt + 1));
      upstream.once('connect', () => {
        open.add(upstream);
        upstream.once('close', () => open.delete(upstream));
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    tryBackend(0);
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
