// The sandbox provider: an independent reading of the upstream API (docs/UPSTREAM.md, docs/CONTRACTS.md §1). One Express
// app serves {base_url} and {gateway_url} at once: the token endpoint, the verification endpoint, the
// bank's consumer pages and the transaction endpoint; a notifier posts the signed results.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express, Response } from 'express';
import express from 'express';
import { consumerRouter } from './consumer-pages.ts';
import { controlRouter } from './control-routes.ts';
import type { SandboxControls } from './controls.ts';
import { createControls } from './controls.ts';
import { releaseHeld } from './endpoint-faults.ts';
import type { ProviderContext } from './context.ts';
import { errorHandler, notFound } from './error-handlers.ts';
import type { ProviderFaults } from './faults.ts';
import { createFaults } from './faults.ts';
import { Notifier } from './notifier.ts';
import type { ProviderConfig, ProviderOptions } from './options.ts';
import { resolveOptions } from './options.ts';
import { ProviderState } from './state.ts';
import type { ProviderStats } from './stats.ts';
import { createStats } from './stats.ts';
import { tokenRouter } from './token-endpoint.ts';
import { transactionRouter } from './transaction-endpoint.ts';
import { verificationRouter } from './verification-endpoint.ts';
import { SWEEP_INTERVAL_MS } from './limits.ts';

export type { ProviderOptions } from './options.ts';
export type { ControlledEndpoint, ProviderFaults, TokenFailureKind } from './faults.ts';
export type { ControlsStatus, SandboxControls } from './controls.ts';
export { CONTROLS_PATH } from './control-routes.ts';
export type { ProviderStats } from './stats.ts';
export type { ProviderLogger } from './logger.ts';
export { DEFAULT_WEBHOOK_SECRET, SANDBOX_CLIENTS, TEST_CONSUMERS, TOKEN_SCOPE } from './sandbox-data.ts';
export { TOKEN_PATH } from './token-endpoint.ts';
export { VERIFICATION_PATH } from './verification-endpoint.ts';
export { REAUTHORIZATION_REQUIRED, TRANSACTION_PATH } from './transaction-endpoint.ts';

/** A sandbox provider built but not listening: mount `app` at the root or under any path. */
export interface Provider {
  /** The Express app serving every upstream endpoint (docs/UPSTREAM.md) plus the consumer pages. */
  app: Express;
  /** The options with defaults applied. */
  config: ProviderConfig;
  /** Everything in memory: tokens, verifications, linked accounts, transactions. */
  state: ProviderState;
  /** Fault controls, mutable at run time. */
  faults: ProviderFaults;
  /**
   * The sandbox controls in code, the same rules as `POST /sandbox/controls/…` and `npx obv-link-sandbox
   * <control>`: mark accounts stale, fail the next verification, delay or time out endpoint 2 or 4, send
   * the next notification late or twice, reset.
   */
  controls: SandboxControls;
  /** Counters of what happened on the wire. */
  stats: ProviderStats;
  /** Revokes one bearer token: later calls with it get 401. */
  revokeToken(token: string): void;
  /** Expires every bearer token issued so far. */
  expireTokens(): void;
  /**
   * Test control: marks a linked account stale (true when the token is known). Endpoint 4 then answers
   * 422 `errorCode: REAUTHORIZATION_REQUIRED` until a verification carrying the token re-authorizes it.
   * Without a token, marks every linked account stale.
   */
  markAccountStale(accountToken?: string): boolean;
  /** Resolves when every queued notification was delivered or abandoned. */
  notificationsSettled(): Promise<void>;
  /** Stops timers and retries and ends requests held open by the timeout fault. */
  close(): void;
}

/** A listening sandbox provider. */
export interface RunningProvider extends Omit<Provider, 'close'> {
  /** Base URL, e.g. `http://127.0.0.1:4010` ({base_url} and {gateway_url}). */
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Builds the sandbox provider's app and state. Throws a TypeError naming a bad option. */
export function createProvider(options: ProviderOptions = {}): Provider {
  const config = resolveOptions(options);
  const state = new ProviderState(config.maxEntries, config.now);
  const faults = createFaults(options.faults);
  const stats = createStats();
  const notifier = new Notifier({
    webhookSecret: config.webhookSecret,
    retryDelaysMs: config.notificationRetryDelaysMs,
    timeoutMs: config.notificationTimeoutMs,
    logger: config.logger,
    faults,
    stats,
  });
  const context: ProviderContext = { config, state, faults, stats, notifier, hanging: new Set<Response>() };

  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(tokenRouter(context));
  app.use(verificationRouter(context));
  app.use(consumerRouter(context));
  app.use(transactionRouter(context));
  app.use(controlRouter(context));
  app.use(notFound);
  app.use(errorHandler(config.logger));

  const sweeper = setInterval(() => state.sweep(), SWEEP_INTERVAL_MS);
  sweeper.unref();

  return {
    app,
    config,
    state,
    faults,
    controls: createControls(context),
    stats,
    revokeToken(token) {
      const issued = state.tokens.get(token);
      if (issued) issued.revoked = true;
    },
    expireTokens() {
      const past = config.now() - 1;
      for (const issued of state.tokens.values()) issued.expiresAt = Math.min(issued.expiresAt, past);
    },
    markAccountStale(accountToken) {
      const accounts =
        accountToken === undefined
          ? [...state.accounts.values()]
          : [state.accounts.get(accountToken)].filter((a) => a !== undefined);
      for (const account of accounts) account.stale = true;
      return accounts.length > 0;
    },
    notificationsSettled: () => notifier.settled(),
    close() {
      clearInterval(sweeper);
      notifier.close();
      releaseHeld(context);
    },
  };
}

/** Options of startProvider: createProvider's plus where to listen. */
export interface StartProviderOptions extends ProviderOptions {
  /** Port; 0 picks a free one. Default 0. */
  port?: number;
  /** Interface to listen on. Default 127.0.0.1. */
  host?: string;
}

/** Builds the provider and listens; resolves once it accepts connections. */
export async function startProvider(options: StartProviderOptions = {}): Promise<RunningProvider> {
  const { port = 0, host = '127.0.0.1', ...providerOptions } = options;
  const provider = createProvider(providerOptions);
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = provider.app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(listening)));
  }).catch((error: unknown) => {
    provider.close();
    throw error;
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    ...provider,
    url: `http://${urlHost}:${address.port}`,
    server,
    close: async () => {
      provider.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
