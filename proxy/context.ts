import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { ProxyConfig } from './config/schema.ts';
import type { ProxyMetrics } from './metrics.ts';
import type { OriginPolicy } from './http/origin.ts';
import type { EnrichStart, OnOutcome, OnSavedAccountRemoved } from './hooks.ts';
import type { Sealer } from './sealing/sealer.ts';
import type { ResultBus, SessionStore } from './sessions/types.ts';
import type { TransactionClient } from './upstream/transaction-client.ts';
import type { VerificationClient } from './upstream/verification-client.ts';

/** Everything the routes and the relay share; built once by `createObvProxy`. */
export interface ProxyContext {
  config: ProxyConfig;
  logger: Logger;
  store: SessionStore;
  bus: ResultBus;
  /** Seals every accountToken before it is stored, opens it where the server needs it. */
  sealer: Sealer;
  verifications: VerificationClient;
  /** Undefined when OBV_MERCHANT_API_KEY is not set (the route is then absent). */
  transactions: TransactionClient | undefined;
  enrichStart: EnrichStart | undefined;
  /** The merchant's hook, called once per session with the stored outcome (token included). */
  onOutcome: OnOutcome | undefined;
  /** The merchant's hook, called once when a shopper removes a saved account. */
  onSavedAccountRemoved?: OnSavedAccountRemoved | undefined;
  originPolicy: OriginPolicy;
  /** Per-client-IP limit on starts (a pass-through when OBV_RATE_LIMIT=0). */
  rateLimiter: RequestHandler;
  metrics: ProxyMetrics;
  /** `draining` once shutdown began: /readyz then answers 503. */
  lifecycle: { draining: boolean };
  now: () => number;
}
