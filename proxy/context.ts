import type { RequestHandler } from 'express';
import type { Store } from 'express-rate-limit';
import type { Logger } from 'pino';
import type { ProxyConfig } from './config/schema.ts';
import type { ProxyMetrics } from './common/metrics.ts';
import type { OriginPolicy } from './http/origin.ts';
import type { EnrichStart, OnOutcome, OnSavedAccountRemoved } from './hooks.ts';
import type { Sealer } from './sealing/sealer.ts';
import type { MerchantEvents } from './events/events.ts';
import type { StoreOutageLog } from './storage/outage-log.ts';
import type { ResultBus } from './storage/result-bus.ts';
import type { SessionStore } from './storage/sessions.ts';
import type { PaymentStore } from './storage/payments.ts';
import type { LinkSessionStore } from './storage/link-sessions.ts';
import type { RemovalStore } from './storage/removals.ts';
import type { PaymentLeases } from './payments/leases.ts';
import type { CredentialState } from './upstream/credential-check.ts';
import type { TransactionClient } from './upstream/transaction-client.ts';
import type { VerificationClient } from './upstream/verification-client.ts';

/** Everything the routes and the relay share; built once by `createObvProxy`. */
export interface ProxyContext {
  config: ProxyConfig;
  logger: Logger;
  store: SessionStore;
  bus: ResultBus;
  /** One payment per order, each claim a lease (storage/payments.ts). */
  payments: PaymentStore;
  /** Turns payments whose holder died `unknown` (payments/leases.ts). */
  leases: PaymentLeases;
  linkSessions: LinkSessionStore;
  /** Saved accounts shoppers removed (storage/removals.ts). */
  removals: RemovalStore;
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
  /**
   * Signed events to the merchant's server (OBV_EVENTS_URL): `ctx.events.emit(type, data)`. Always
   * present; does nothing when events are off.
   */
  events: MerchantEvents;
  originPolicy: OriginPolicy;
  /** Per-client-IP limit on starts (a pass-through when OBV_RATE_LIMIT=0). */
  rateLimiter: RequestHandler;
  /** Where refused API keys are counted (Redis: across instances); undefined = in memory. */
  authFailureStore: Store | undefined;
  metrics: ProxyMetrics;
  /** `draining` once shutdown began: /readyz then answers 503. */
  lifecycle: { draining: boolean };
  /** One log line per session store outage (and one when it is back), instead of one per refusal. */
  storeOutage: StoreOutageLog;
  /** What the last token request said of the client credentials, and a way to ask once more (readiness). */
  credentials: { state: CredentialState; recheck(): void };
  /** OBV_BIND_BANK_STEP: how long after a success a starting browser's return waits before it confirms (sessions/bank-step.ts). */
  bankStepGraceMs: number;
  now: () => number;
}
