// `npm start`'s servers, separate from cli.ts so tests can run them in-process: the proxy's HTTP server
// (HOST/PORT, header and request time-outs fit for a checkout), the optional notification listener and
// metrics listener, and a graceful shutdown: stop accepting, let in-flight requests finish (a payment
// under way at the provider for as long as it may take), close the WebSockets with 1001 ("going away":
// the element reconnects, to another instance behind a balancer).
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { ProxyConfig } from './config/schema.ts';
import { createObvProxy, type ObvProxy, type ObvProxyDependencies } from './index.ts';
import { serverOptions } from './http/server-options.ts';
import { isLoopbackHost, listenerWarnings } from './config/warnings.ts';
import { merchantApiKeys } from './config/merchant-api-keys.ts';
import { paymentLeaseMs } from './payments/orders.ts';

/** After a payment's answer, how long its HTTP response has to be written before the connections are cut. */
const PAYMENT_ANSWER_MARGIN_MS = 1_000;

/**
 * The longest a shutdown takes: the drain window, then in-flight requests for OBV_SHUTDOWN_TIMEOUT or a
 * payment at the provider for its worst case (4 × OBV_UPSTREAM_TIMEOUT + 5 s), whichever is longer. A
 * deploy's grace period (Kubernetes' terminationGracePeriodSeconds, `docker stop -t`) must be longer, or
 * its SIGKILL can cut a payment (docs/PROXY.md, Shutdown).
 */
export function shutdownBoundMs(
  config: Pick<ProxyConfig, 'drainWindowMs' | 'shutdownTimeoutMs' | 'upstreamTimeoutMs'>,
): number {
  return config.drainWindowMs + Math.max(config.shutdownTimeoutMs, paymentLeaseMs(config) + PAYMENT_ANSWER_MARGIN_MS);
}

export { serverOptions };

export interface ProxyServers {
  proxy: ObvProxy;
  /** The browser-facing server (routes, WebSocket). */
  server: http.Server;
  /** The provider's notification listener, with OBV_NOTIFICATION_PORT. */
  notificationServer?: http.Server;
  /** The Prometheus listener, with OBV_METRICS_PORT. */
  metricsServer?: http.Server;
  /** Requests being answered right now on any of the servers. */
  readonly inFlight: number;
  /**
   * Answers /readyz with 503 for `drainWindowMs` while serving on, then stops accepting, waits up to
   * `shutdownTimeoutMs` for in-flight requests (and for a payment under way at the provider until its
   * answer, at most its worst case: `shutdownBoundMs`), closes the WebSockets
   * (1001), the session backend and every connection left. Resolves once all servers are closed.
   */
  shutdown(): Promise<void>;
}

async function listen(server: http.Server, port: number, host: string | undefined): Promise<void> {
  server.listen(port, host);
  await once(server, 'listening');
}

/**
 * `http://host:port`, for the log line (IPv6 in brackets): the host it was bound to as it is, so
 * `0.0.0.0` reads as every interface; an unset host (every interface) shows as localhost.
 */
export function serverUrl(server: http.Server, host: string | undefined): string {
  const { port } = server.address() as AddressInfo;
  const name = !host ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/** Where a listener really listens, for the log line: `127.0.0.1:3000`, or every interface when HOST is unset. */
export function listenAddress(server: http.Server, host: string | undefined): string {
  const { port } = server.address() as AddressInfo;
  return host
    ? `${host.includes(':') ? `[${host}]` : host}:${port}`
    : `every interface, port ${port} (HOST unset; HOST=127.0.0.1 behind a TLS proxy on this machine)`;
}

export async function startProxyServers(
  config: ProxyConfig,
  dependencies: ObvProxyDependencies & { logger: Logger },
): Promise<ProxyServers> {
  const { logger } = dependencies;
  const proxy = createObvProxy({ ...config, ...dependencies });
  // Every start needs the merchant server's word. Standing alone, the proxy has no in-process caller of
  // createLinkSession: without the API key (POST /link-sessions) or a hook, no verification can start.
  for (const warning of listenerWarnings(config)) logger.warn(warning);
  if (merchantApiKeys(config).length === 0 && !dependencies.enrichStart) {
    logger.warn(
      'no OBV_MERCHANT_API_KEY: no verification can start (your server makes a link session per checkout with the key, POST /link-sessions)',
    );
  }
  let inFlight = 0;
  const countInFlight: RequestHandler = (_req, res, next) => {
    inFlight++;
    res.once('close', () => inFlight--);
    next();
  };
  const makeApp = (mount: (app: Express) => void): Express => {
    const app = express();
    app.disable('x-powered-by');
    app.use(countInFlight);
    mount(app);
    return app;
  };
  const options = serverOptions(config);

  const server = http.createServer(
    options,
    makeApp((app) => app.use(proxy.mountPath, proxy.router)),
  );
  proxy.attachRelay(server);
  await listen(server, config.port, config.host);
  logger.info(
    {
      url: `${serverUrl(server, config.host)}${proxy.mountPath}`,
      address: listenAddress(server, config.host),
      publicUrl: config.publicUrl,
    },
    'obv-link proxy listening',
  );
  if (config.sandbox && config.host && isLoopbackHost(config.host)) {
    logger.info(`sandbox mode: listening on ${config.host} only (HOST=0.0.0.0 listens on every interface)`);
  }
  // One token request now, so wrong credentials show in /readyz and one log line, not as the first
  // shopper's 502. Not awaited: the listeners open meanwhile, with /readyz saying "starting".
  void proxy.checkCredentials();

  let notificationServer: http.Server | undefined;
  if (config.notificationPort !== undefined && proxy.notificationRouter) {
    const router = proxy.notificationRouter;
    notificationServer = http.createServer(
      options,
      makeApp((app) => app.use(proxy.mountPath, router)),
    );
    await listen(notificationServer, config.notificationPort, config.host);
    logger.info(
      {
        url: `${serverUrl(notificationServer, config.host)}${proxy.mountPath}`,
        publicUrl: config.notificationPublicUrl,
      },
      'notification listener ready',
    );
  }

  let metricsServer: http.Server | undefined;
  if (config.metricsPort !== undefined) {
    metricsServer = http.createServer(
      options,
      makeApp((app) => app.get('/metrics', proxy.metricsHandler)),
    );
    await listen(metricsServer, config.metricsPort, config.metricsHost);
    logger.info({ url: `${serverUrl(metricsServer, config.metricsHost)}/metrics` }, 'metrics listener ready');
  }

  const servers = [server, notificationServer, metricsServer].filter((s): s is http.Server => s !== undefined);
  let shuttingDown: Promise<void> | undefined;

  async function shutdown(): Promise<void> {
    // Readiness first: a balancer that probes /readyz sees 503 and stops sending while this instance
    // still serves what reaches it; only then does the listener close.
    proxy.markDraining();
    if (config.drainWindowMs > 0) {
      logger.info(
        { drainWindowMs: config.drainWindowMs },
        'readiness is 503: serving on until load balancers stop sending (OBV_DRAIN_WINDOW)',
      );
      await new Promise((resolve) => setTimeout(resolve, config.drainWindowMs));
    }
    // Sockets first (1001: the browsers reconnect elsewhere at once), while HTTP requests still finish.
    const drained = proxy.drain();
    const closed = servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
    // Idle keep-alive connections are cut now and again as requests finish, so nothing waits on them.
    const sweep = setInterval(() => servers.forEach((s) => s.closeIdleConnections()), 50);
    servers.forEach((s) => s.closeIdleConnections());
    const started = Date.now();
    const requestsBy = started + config.shutdownTimeoutMs;
    // A payment is never cut at the provider by a shutdown: it has its worst case, then a moment for its answer.
    const paymentsBy = started + paymentLeaseMs(config) + PAYMENT_ANSWER_MARGIN_MS;
    let paymentSeen = 0;
    if (proxy.paymentsInFlight > 0) {
      logger.info(
        { payments: proxy.paymentsInFlight, boundMs: paymentsBy - started },
        'shutdown: waiting for the payments under way at the provider',
      );
    }
    while (inFlight > 0) {
      const now = Date.now();
      if (proxy.paymentsInFlight > 0) paymentSeen = now;
      if (now >= Math.max(requestsBy, Math.min(paymentsBy, paymentSeen + PAYMENT_ANSWER_MARGIN_MS))) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    if (inFlight > 0)
      logger.warn(
        { inFlight, payments: proxy.paymentsInFlight },
        'shutdown time-out: closing requests that did not finish',
      );
    await drained;
    await proxy.close();
    clearInterval(sweep);
    servers.forEach((s) => s.closeAllConnections());
    await Promise.all(closed);
  }

  return {
    proxy,
    server,
    notificationServer,
    metricsServer,
    get inFlight() {
      return inFlight;
    },
    shutdown() {
      shuttingDown ??= shutdown();
      return shuttingDown;
    },
  };
}
