// The whole flow in one process: the sandbox provider (its own loopback port, like a real bank on
// another origin), the proxy mounted at /obv and the demo merchant's checkout, both on one port.
// `npm run demo` calls this; the end-to-end tests call it with port 0 and shorter lifetimes.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createObvProxy, type ObvProxyOptions, type ProxyConfigInput } from '../proxy/index.ts';
import { startProvider, type RunningProvider, type StartProviderOptions } from '../sandbox/index.ts';
import { loadAssets } from './checkout/server/assets.ts';
import { checkoutErrorHandler, createCheckoutRoutes } from './checkout/server/checkout-routes.ts';
import { OrderBook, SHOP } from './checkout/server/orders.ts';
import { createTransactionClient } from './checkout/server/transactions.ts';
import { SavedAccountBook } from './checkout/server/saved-accounts.ts';

/** The demo shop's merchant id at the provider. */
const MERCHANT_ID = 'northwind-roasters';

/** The sandbox's documented client and webhook secret (docs/CONTRACTS.md §1). */
export const SANDBOX_CREDENTIALS = {
  clientId: 'sandbox_client',
  clientSecret: 'sandbox_secret',
  webhookSecret: 'whsec_c2FuZGJveC13ZWJob29rLXNlY3JldC1vYnYtbGluaw==',
  pgwAppId: 'sandbox-app',
} as const;

export interface DemoOptions {
  /** Port of the checkout and the proxy; 0 picks a free one. Default 8080. */
  port?: number;
  /** Interface to listen on. Default 127.0.0.1: the demo is for this machine only. */
  host?: string;
  /** How long a verification session lives before it reports `expired`. Default: the proxy's (30 min). */
  sessionTtlMs?: number;
  /**
   * Where the proxy keeps its state (SQLite). Default: a new temporary directory, removed on close;
   * `npm run demo` passes OBV_DATA_DIR or ./obv-link-data, so a restart keeps what was paid.
   */
  dataDir?: string;
  /** The proxy's log level. Default `silent`. */
  logLevel?: ProxyConfigInput['logLevel'];
  /** Options of the sandbox provider (lifetimes, faults, logger). */
  provider?: Omit<StartProviderOptions, 'port' | 'host'>;
  /** Overrides of the proxy's configuration, applied last. */
  proxy?: Partial<ObvProxyOptions>;
}

export interface RunningDemo {
  /** The checkout page, e.g. `http://127.0.0.1:8080/`. */
  url: string;
  /** The sandbox provider (its faults and state are reachable for tests). */
  provider: RunningProvider;
  /** The shop's saved accounts, by shopper (its in-memory "database"). */
  savedAccounts: SavedAccountBook;
  server: Server;
  close(): Promise<void>;
}

/** The port is taken by another process: the CLI turns this into a clear message. */
export class PortInUseError extends Error {
  constructor(
    readonly port: number,
    options?: ErrorOptions,
  ) {
    super(`port ${port} is already in use`, options);
    this.name = 'PortInUseError';
  }
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(port, { cause: error }) : error);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Starts provider, proxy and checkout. The proxy needs its own public URL (for the per-session return
 * and notification URLs), which is only known once the port is bound, so the server listens first and
 * gets its request handler after.
 */
export async function startDemo(options: DemoOptions = {}): Promise<RunningDemo> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer();
  const address = await listen(server, options.port ?? 8080, host);
  // Listening on every interface (HOST=0.0.0.0 or ::) is still reached through loopback here.
  const reachable = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address;
  const urlHost = reachable.includes(':') ? `[${reachable}]` : reachable;
  const publicUrl = `http://${urlHost}:${address.port}`;

  let provider: RunningProvider | undefined;
  let temporaryDataDir: string | undefined;
  try {
    // After listen, so a busy port is reported at once rather than after the build.
    const assets = await loadAssets();
    // The bank page names the shop, as a provider names the merchant it has on file.
    provider = await startProvider({
      merchantNames: { [MERCHANT_ID]: SHOP.name },
      ...options.provider,
      port: 0,
      host: '127.0.0.1',
    });
    // Generated per run: the merchant server is the only holder, the page never sees it.
    const merchantApiKey = randomBytes(24).toString('base64url');
    const orders = new OrderBook();
    const savedAccounts = new SavedAccountBook();
    if (!options.dataDir) temporaryDataDir = await mkdtemp(join(tmpdir(), 'obv-link-demo-'));
    const proxy = createObvProxy({
      dataDir: options.dataDir ?? temporaryDataDir,
      baseUrl: provider.url,
      gatewayUrl: provider.url,
      clientId: SANDBOX_CREDENTIALS.clientId,
      clientSecret: SANDBOX_CREDENTIALS.clientSecret,
      webhookSecret: SANDBOX_CREDENTIALS.webhookSecret,
      pgwAppId: SANDBOX_CREDENTIALS.pgwAppId,
      pgwClientId: SANDBOX_CREDENTIALS.clientId,
      merchantId: MERCHANT_ID,
      merchantName: SHOP.name,
      publicUrl,
      // The proxy allows its public origin only (never "whatever Host the request names"); the demo
      // page may also be opened as localhost.
      allowedOrigins: reachable === '127.0.0.1' ? [`http://localhost:${address.port}`] : [],
      mountPath: '/obv',
      merchantApiKey,
      // The sandbox speaks plain http on loopback; HTTPS only (docs/UPSTREAM.md#d1-https-only) is for real providers.
      sandbox: true,
      logLevel: options.logLevel ?? 'silent',
      // The shopper removed a saved account at checkout: the shop deletes its copy.
      onSavedAccountRemoved: (removal) => savedAccounts.remove(removal.merchantUserId, removal.accountId),
      ...(options.sessionTtlMs ? { sessionTtlMs: options.sessionTtlMs } : {}),
      ...options.proxy,
    });

    const running = provider;
    const app = express();
    app.disable('x-powered-by');
    app.use(proxy.mountPath, proxy.router);
    app.use(
      createCheckoutRoutes({
        assets,
        orders,
        savedAccounts,
        markAccountsStale: () => void running.markAccountStale(),
        pageOrigins: [publicUrl, ...proxy.config.allowedOrigins],
        // The key the proxy actually holds (a test may override it).
        proxy: createTransactionClient({
          proxyBase: `${publicUrl}${proxy.mountPath}`,
          merchantApiKey: proxy.config.merchantApiKey ?? '',
        }),
      }),
    );
    app.use(checkoutErrorHandler);
    proxy.attachRelay(server);
    server.on('request', app);

    return {
      url: `${publicUrl}/`,
      provider: running,
      savedAccounts,
      server,
      async close() {
        await proxy.close();
        await closeServer(server);
        await running.close();
        if (temporaryDataDir) await rm(temporaryDataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await closeServer(server);
    await provider?.close();
    if (temporaryDataDir) await rm(temporaryDataDir, { recursive: true, force: true });
    throw error;
  }
}
