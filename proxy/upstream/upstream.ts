// The provider's endpoints as the proxy uses them: one token manager per scope (endpoint 1), the
// verification client (2) and, with the endpoint 4 settings, the transaction client (4); every call
// timed into the metrics, and every token request kept as the credentials' last known status (readiness).
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config/schema.ts';
import { timeUpstream, type ProxyMetrics } from '../common/metrics.ts';
import { CredentialState, logCredentialCheck, type CredentialCheck } from './credential-check.ts';
import { TokenManager } from './token-manager.ts';
import { createTransactionClient, type TransactionClient } from './transaction-client.ts';
import { createVerificationClient, type VerificationClient } from './verification-client.ts';

export interface UpstreamDeps {
  config: Pick<
    ProxyConfig,
    | 'baseUrl'
    | 'gatewayUrl'
    | 'clientId'
    | 'clientSecret'
    | 'tokenScope'
    | 'transactionScope'
    | 'upstreamTimeoutMs'
    | 'pgwAppId'
    | 'pgwClientId'
  >;
  metrics: Pick<ProxyMetrics, 'upstreamSeconds' | 'tokenRefreshes'>;
  /** Token endpoint retry tuning (tests). */
  tokenRetry?: { limit?: number; delayMs?: number } | undefined;
  logger: Logger;
  now: () => number;
}

export interface Upstream {
  /** Endpoint 2. */
  verifications: VerificationClient;
  /** Endpoint 4; undefined without OBV_PGW_APP_ID and OBV_PGW_CLIENT_ID. */
  transactions: TransactionClient | undefined;
  /** What the last token request said of the client credentials, and a way to ask once more (readiness). */
  credentials: { state: CredentialState; recheck(): void };
  /** One token request now, and its one log line (`proxy.checkCredentials`). */
  checkCredentials(): Promise<CredentialCheck>;
}

export function createUpstream(deps: UpstreamDeps): Upstream {
  const { config, metrics, logger, now } = deps;
  const credentials = new CredentialState(now);
  const timeoutMs = config.upstreamTimeoutMs;
  const tokenOptions = {
    baseUrl: config.baseUrl,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    timeoutMs,
    retryLimit: deps.tokenRetry?.limit,
    retryDelayMs: deps.tokenRetry?.delayMs,
    logger,
    now,
    async observe<T>(request: () => Promise<T>): Promise<T> {
      try {
        const token = await timeUpstream(metrics.upstreamSeconds, 'token', request);
        metrics.tokenRefreshes.inc({ result: 'ok' });
        credentials.record();
        return token;
      } catch (error) {
        metrics.tokenRefreshes.inc({ result: 'error' });
        credentials.record(error);
        throw error;
      }
    },
  };
  const tokens = new TokenManager({ ...tokenOptions, scope: config.tokenScope });
  const transactionTokens =
    config.transactionScope && config.transactionScope !== config.tokenScope
      ? new TokenManager({ ...tokenOptions, scope: config.transactionScope })
      : tokens;
  const verificationClient = createVerificationClient({ baseUrl: config.baseUrl, tokens, timeoutMs });
  const transactionClient =
    config.pgwAppId && config.pgwClientId
      ? createTransactionClient({
          gatewayUrl: config.gatewayUrl,
          tokens: transactionTokens,
          timeoutMs,
          pgwAppId: config.pgwAppId,
          pgwClientId: config.pgwClientId,
        })
      : undefined;
  return {
    verifications: {
      start: (request) =>
        timeUpstream(metrics.upstreamSeconds, 'verification', () => verificationClient.start(request)),
    },
    transactions: transactionClient && {
      submit: (request) =>
        timeUpstream(metrics.upstreamSeconds, 'transaction', () => transactionClient.submit(request)),
    },
    credentials: {
      state: credentials,
      recheck: () => {
        credentials.started();
        tokens.getToken().catch(() => undefined); // recorded by observe(); nobody waits on it
      },
    },
    async checkCredentials() {
      credentials.started();
      let failure: unknown;
      await tokens.getToken().catch((error: unknown) => (failure = error));
      const check = credentials.current;
      logCredentialCheck(logger, check, failure, config.baseUrl);
      return check;
    },
  };
}
