// Public API of the proxy: `createObvProxy(options)` builds the Express sub-app, the upstream clients
// and the session backend; `attachRelay(server)` adds the WebSocket relay to the merchant's server.
import type { Server } from 'node:http';
import type { Express, RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Logger } from 'pino';
import { createApp, createNotificationApp } from './app.ts';
import { parseProxyConfig, type ProxyConfig, type ProxyConfigInput } from './config/schema.ts';
import type { ProxyContext } from './context.ts';
import { createLogger } from './common/logger.ts';
import { createOriginPolicy } from './http/origin.ts';
import { createClientAddress } from './http/client-address.ts';
import { createMetrics, metricsHandler, timeUpstream, type ProxyMetrics } from './common/metrics.ts';
import { attachRelay, type Relay } from './relay/relay.ts';
import { problem } from './common/errors.ts';
import type { EnrichStart, OnOutcome, OnSavedAccountRemoved } from './hooks.ts';
import { createStorage } from './storage/create-storage.ts';
import type { Storage } from './storage/storage.ts';
import { watchPaymentLeases } from './payments/leases.ts';
import { protectionWarnings } from './config/warnings.ts';
import { ReconcileBody, reconcilePayment, type Reconciled } from './payments/reconcile.ts';
import { createPayer, PaymentInput, type PaymentAnswer } from './payments/pay.ts';
import { readLinkedAccount, type LinkedAccount } from './payments/linked-account.ts';
import { paymentView, readPayment, type PaymentView } from './payments/orders.ts';
import { createEventVerifier, type DeliveryHeaders } from './events/verify-event.ts';
import { EVENT_TYPES as EVENT_TYPE_LIST, type EventType as MerchantEventType, type MerchantEvent } from './storage/events.ts';
import { sendTestEvents, type TestEventResult } from './events/test-events.ts';
import { acknowledgeEvent, EventId, EventListQuery, listEvents, redeliverEvent, type ListedEvent } from './events/event-list.ts';
import { IdempotencyKey, text } from './common/validation.ts';
import { z } from 'zod';
import { createMerchantEvents, type EventTimings, type MerchantEvents } from './events/events.ts';
import { StoreOutageLog } from './storage/outage-log.ts';
import { TokenManager } from './upstream/token-manager.ts';
import { CredentialState, logCredentialCheck, type CredentialCheck } from './upstream/credential-check.ts';
import { createTransactionClient } from './upstream/transaction-client.ts';
import { createVerificationClient } from './upstream/verification-client.ts';
import { BANK_STEP_RETURN_GRACE_MS, START_RATE_WINDOW_MS } from './config/limits.ts';
import { isSandboxSealingKey } from './config/sealing-keys.ts';
import { createSealer } from './sealing/sealer.ts';
import { CreateLinkSessionBody, createLinkSession, type CreatedLinkSession } from './link-sessions/link-sessions.ts';
import { parseOrThrow } from './common/validation.ts';
import { releasedReader } from './verifications/bank-step.ts';

export type { ProxyConfig, ProxyConfigInput } from './config/schema.ts';
export { ConfigError, configFromEnv, parseProxyConfig } from './config/schema.ts';
export { ENV_VARIABLES } from './config/env.ts';
export type { MerchantApiKey } from './config/merchant-api-keys.ts';
export type { EnrichStart, OnOutcome, OnSavedAccountRemoved, OutcomeReport, SavedAccountRemoval, VerificationDraft } from './hooks.ts';
export type { SavedAccount } from './storage/saved-accounts.ts';
export type { ReconnectResult } from './storage/saved-accounts.ts';
export type { ConsentRecord } from './storage/saved-accounts.ts';
export type { ConsentWords } from './words/consent.ts';
export type { LinkedAccount } from './payments/linked-account.ts';
export { WebhookSignatureError } from './common/webhook-signature.ts';
export type { DeliveryHeaders } from './events/verify-event.ts';
export type { TestEventResult } from './events/test-events.ts';
export type { PaymentInput, PaymentAnswer } from './payments/pay.ts';
export type { CreateLinkSessionBody as LinkSessionInput, CreatedLinkSession } from './link-sessions/link-sessions.ts';
export type { PaymentView } from './payments/orders.ts';
export type { Relay } from './relay/relay.ts';
export type * from './storage/sessions.ts';
export type * from './storage/result-bus.ts';
export { createLogger } from './common/logger.ts';
export type { ProxyMetrics } from './common/metrics.ts';
export * from './upstream/errors.ts';
export type { CredentialCheck, CredentialStatus } from './upstream/credential-check.ts';
export { ProblemError } from './common/errors.ts';
export { SessionBackendUnavailableError } from './storage/errors.ts';
export { createStorage, type StorageOptions } from './storage/create-storage.ts';
export type { Storage, StorageKind } from './storage/storage.ts';
export { DataDirectoryError } from './storage/sqlite/database.ts';
export type { PaymentRecord, PaymentState } from './storage/payments.ts';
export type { ReconcileBody, Reconciled } from './payments/reconcile.ts';
export { MemorySessionStore } from './storage/memory/session-store.ts';
export { MemoryResultBus } from './storage/memory/bus.ts';
export type { MerchantEvent, EventType, EventData } from './storage/events.ts';
export { EVENT_TYPES, MerchantEventSchema } from './storage/events.ts';
export type { MerchantEvents, EmitOptions, EventTimings } from './events/events.ts';
export type { ListedEvent, ListedDelivery } from './events/event-list.ts';
export type { EventOutbox } from './storage/outbox.ts';
export { MemoryEventOutbox } from './storage/memory/outbox.ts';
export { openRedisStorage, type RedisStorage, type RedisStorageOptions } from './storage/redis/storage.ts';
export { serverOptions } from './http/server-options.ts';

/** What `createObvProxy` needs besides the configuration. All optional. */
export interface ObvProxyDependencies {
  /** pino logger; default: a new one at `logLevel`. */
  logger?: Logger;
  /**
   * Where every record lives (sessions, the result bus, link sessions, payments, removals, the merchant
   * events' outbox, the rate-limit counters), built by you: `createStorage({ kind, … })`, or
   * `openRedisStorage({ url, … })` with every Redis knob. Default: the one `storage` names (SQLite in
   * `dataDir`, Redis at `redisUrl`, or memory), closed by `close()`. A storage you pass you close.
   */
  backend?: Storage;
  /** Fill the upstream verification request from the merchant's own session. */
  enrichStart?: EnrichStart;
  /**
   * Called once per session when its outcome is stored (even if the shopper closed the checkout), with
   * the accountToken: keep it server side for later transactions. If it throws, the notification is
   * answered 500 and the provider's retry calls it again.
   */
  onOutcome?: OnOutcome;
  /**
   * Called once when a shopper removes a saved account at checkout (after confirming), with its stable
   * `accountId`: delete it from your records. If it throws, the removal is refused and it stays offered.
   */
  onSavedAccountRemoved?: OnSavedAccountRemoved;
  /** Merchant event delivery timings (tests: a short retry schedule instead of a day). */
  eventTimings?: EventTimings;
  /** Relay tuning (tests, benchmarks). */
  relay?: { subscribeTimeoutMs?: number; pingIntervalMs?: number; maxPayload?: number; expiryRetryMs?: number; recheckIntervalMs?: number };
  /** Also collect prom-client's process metrics (CPU, memory, event loop) in `metrics`. Default true. */
  defaultMetrics?: boolean;
  /** Token endpoint retry tuning (tests). */
  tokenRetry?: { limit?: number; delayMs?: number };
  /** Clock (tests). */
  now?: () => number;
  /** The bank step's return grace (tests); default BANK_STEP_RETURN_GRACE_MS (sessions/bank-step.ts). */
  bankStepGraceMs?: number;
  /**
   * The element's bundle the hosted link page serves (a path to obv-link-account.js); default: the
   * package's own dist/obv-link-account.js. Only needed when running from a source checkout without a build.
   */
  hostedElementScript?: string;
}

export type ObvProxyOptions = ProxyConfigInput & ObvProxyDependencies;

export interface ObvProxy {
  /** Express sub-app: mount it at `config.mountPath` (`app.use(proxy.mountPath, proxy.router)`). */
  router: Express;
  /** The validated configuration (contains secrets: never send it anywhere). */
  config: ProxyConfig;
  /** `config.mountPath`, for `app.use(proxy.mountPath, proxy.router)`. */
  mountPath: string;
  /** Adds the WebSocket relay at `{mountPath}/ws` to `server`. Call once per server. */
  attachRelay(server: Server): Relay;
  /**
   * The notification route alone (plus /healthz), when `notificationPublicUrl` puts the provider's
   * notifications on their own listener: mount it at `mountPath` on that server. Undefined otherwise
   * (the notifications are then part of `router`).
   */
  notificationRouter: Express | undefined;
  /** This proxy's Prometheus registry (prom-client). */
  metrics: ProxyMetrics;
  /** Merchant events: `events.emit(type, data)` records and sends one (nothing when OBV_EVENTS_URL is unset). */
  events: MerchantEvents;
  /** Serves `metrics` in the Prometheus text format: mount it where only your monitoring reaches it. */
  metricsHandler: RequestHandler;
  /**
   * Asks the provider for a token once (one token request; the token is kept for the first shopper) and
   * logs one line saying whether OBV_CLIENT_ID / OBV_CLIENT_SECRET were accepted. Until it answers, and
   * while the credentials are refused, /readyz answers 503; every later token request keeps that current.
   * `npm start` calls it at boot; call it after `listen` when the proxy is mounted in your app.
   */
  checkCredentials(): Promise<CredentialCheck>;
  /**
   * The first step of a shutdown: from now on /readyz answers 503 (`{status: "draining"}`) while every
   * route and WebSocket keeps working, so load balancers stop sending new shoppers before the listener
   * closes. `drain()` and `close()` do it too.
   */
  markDraining(): void;
  /**
   * Starts a shutdown: /readyz answers 503 (load balancers stop sending new shoppers) and the WebSockets
   * are closed with 1001, "going away" (the element reconnects, to another instance behind a balancer).
   * HTTP routes keep answering, so in-flight requests can finish before `close()`.
   */
  drain(): Promise<void>;
  /**
   * Creates a link session in-process (what POST {mountPath}/link-sessions does for other backends):
   * the merchant's server names the user, order, amount, currency, consumer and language, and gives the
   * returned `linkToken` to the page (`<obv-link-account link-token="…">`). Throws a 400 ProblemError
   * naming each invalid field.
   */
  createLinkSession(input: CreateLinkSessionBody): Promise<CreatedLinkSession>;
  /**
   * Records what the provider says of a payment whose result is `unknown` (a `payment.unknown` event, or
   * GET /transactions/{id}): `paid` closes the order with it, `not-charged` lets the order be paid again.
   * What POST {mountPath}/transactions/{id}/reconcile does. Throws a ProblemError (404 another payment,
   * 409 a payment that is not `unknown`, 400 a bad field).
   */
  reconcilePayment(merchantTransactionId: string, input: ReconcileBody): Promise<Reconciled>;
  /**
   * Pays an order with the link reference the page got — what POST {mountPath}/transactions does, with the
   * same rules and errors, in process: no HTTP call to yourself, no API key. `idempotencyKey`: a retry with
   * the same key and input answers the first result (`replayed: true`). Throws a ProblemError for each
   * refusal the route answers as a problem (404 unknown reference, 409 paid or in progress, 410, 422…) and
   * the upstream errors. Needs OBV_PGW_APP_ID and OBV_PGW_CLIENT_ID (filled in sandbox mode).
   */
  pay(input: PaymentInput, options?: { idempotencyKey?: string }): Promise<PaymentAnswer>;
  /** The verified account behind a link reference, token included (GET {mountPath}/links/{linkRef}); a 404/403 ProblemError otherwise. */
  readLink(linkRef: string): Promise<LinkedAccount>;
  /** An order's payment (GET {mountPath}/transactions/{id}), or undefined when none is on record. */
  readPayment(merchantTransactionId: string): Promise<PaymentView | undefined>;
  /**
   * Merchant events in the order recorded, each with where its delivery stands (GET {mountPath}/events):
   * after the event `after`, at most `limit` (1–100, default 50), only those in the `delivery` states
   * (`undelivered`: pending or given up). A 400 ProblemError naming the field for an unknown `after` or a
   * bad value. Catching up: list `{delivery: 'undelivered'}`, handle each, `acknowledgeEvent` it.
   * These three calls throw a TypeError when events are off (no OBV_EVENTS_URL).
   */
  listEvents(query?: { after?: string; limit?: number; delivery?: 'undelivered' | 'pending' | 'failed' }): Promise<{ events: ListedEvent[]; hasMore: boolean }>;
  /**
   * You handled the event (POST {mountPath}/events/{eventId}/ack): it becomes `delivered` with
   * `acknowledgedBy: "api"` and no attempt follows. Idempotent. A 404 ProblemError for an unknown id.
   */
  acknowledgeEvent(eventId: string): Promise<ListedEvent>;
  /**
   * Sends the event again now, same id (POST {mountPath}/events/{eventId}/redeliver): a delivered or
   * given-up event starts a new delivery; asking again while an attempt is due changes nothing. A 404
   * ProblemError for an unknown id.
   */
  redeliverEvent(eventId: string): Promise<ListedEvent>;
  /**
   * Checks a merchant event delivery's signature against OBV_EVENTS_SECRETS and returns the event: for a
   * Node app that receives its own events (`express.raw()` body and `req.headers`). Throws
   * WebhookSignatureError for a forged, altered or stale delivery.
   */
  verifyEvent(body: string | Buffer, headers: DeliveryHeaders): MerchantEvent;
  /**
   * Sends a correctly signed sample of `type` (of every type when omitted) to OBV_EVENTS_URL, as
   * `npx obv-link-proxy send-test-event` does: to try your event handler without a bank step. Samples are
   * not recorded, listed or retried. Throws a TypeError when events are off (no OBV_EVENTS_URL).
   */
  sendTestEvents(type?: MerchantEventType): Promise<TestEventResult[]>;
  /** Closes the relays (1001, "going away"), the storage it created and its timers. Does not close your server. */
  close(): Promise<void>;
}

/** One line at boot saying where state lives, and loudly when a restart loses it. */
function logStorage(logger: Logger, config: ProxyConfig, storage: Storage): void {
  if (storage.kind === 'memory') {
    logger.warn(`storage is in memory (OBV_STORAGE=memory${config.sandbox ? '' : ', OBV_ALLOW_VOLATILE_STORAGE=true'}): a restart loses every payment record (an order could be paid twice), session and merchant event`);
  } else {
    logger.info({ storage: storage.kind, location: storage.location }, storage.kind === 'sqlite' ? 'state is kept in SQLite (one instance)' : 'state is kept in Redis');
  }
}

/**
 * Builds the proxy. Throws ConfigError (listing every bad setting) when the configuration is invalid.
 *
 * ```ts
 * const proxy = createObvProxy({ ...configFromEnv(), enrichStart });
 * app.use(proxy.mountPath, proxy.router);
 * const server = app.listen(3000);
 * proxy.attachRelay(server);
 * ```
 */
export function createObvProxy(options: ObvProxyOptions): ObvProxy {
  // The schema is a plain z.object: it drops the dependency keys (and any other unknown key).
  const config = parseProxyConfig(options);
  const logger = options.logger ?? createLogger(config.logLevel);
  const now = options.now ?? Date.now;
  const ownStorage = options.backend ? undefined
    : createStorage({ kind: config.storage, dataDir: config.dataDir, redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, logger, now: options.now });
  const backend = options.backend ?? ownStorage!;
  const store = backend.sessionStore;
  const bus = backend.resultBus;
  logStorage(logger, config, backend);
  if (config.sandbox) {
    logger.warn(`sandbox mode (OBV_SANDBOX=true): plain http and the sandbox's published credentials are accepted${
      config.bindBankStep ? '' : ', and bank steps are not bound to the starting browser (OBV_BIND_BANK_STEP)'}; never use it in production`);
  }
  for (const warning of protectionWarnings(config)) logger.warn(warning);
  if (config.bindBankStep && config.allowedOrigins.length > 0) {
    logger.warn({ allowedOrigins: config.allowedOrigins },
      'OBV_BIND_BANK_STEP is on: pages on OBV_ALLOWED_ORIGINS can follow a verification but not start one (only pages on OBV_PUBLIC_URL\'s origin can)');
  }
  // The schema requires keys outside sandbox mode; sandbox mode fills the published one.
  const sealingKeys = config.sealingKeys ?? [];
  if (sealingKeys.some(isSandboxSealingKey)) {
    logger.warn('sandbox mode: stored accountTokens are sealed with the sandbox\'s published key (set OBV_SEALING_KEYS for a key of your own)');
  }
  const sealer = createSealer(sealingKeys);
  const metrics = createMetrics({ defaultMetrics: options.defaultMetrics });
  const credentials = new CredentialState(now);
  const storeOutage = new StoreOutageLog(logger, store, now);

  const timeoutMs = config.upstreamTimeoutMs;
  const tokenOptions = {
    baseUrl: config.baseUrl,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    timeoutMs,
    retryLimit: options.tokenRetry?.limit,
    retryDelayMs: options.tokenRetry?.delayMs,
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
  const transactionTokens = config.transactionScope && config.transactionScope !== config.tokenScope
    ? new TokenManager({ ...tokenOptions, scope: config.transactionScope })
    : tokens;

  const rateLimitStore = backend.rateLimitStore;
  const rateLimiter = config.rateLimit > 0
    ? rateLimit({
      windowMs: START_RATE_WINDOW_MS,
      limit: config.rateLimit,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      ...(rateLimitStore ? { store: rateLimitStore } : {}),
      handler: (_req, _res, next) => {
        metrics.starts.inc({ result: 'rate-limited' });
        next(problem('rate-limited', 'Too many verification requests from this address; try again later.'));
      },
    })
    : (_req: unknown, _res: unknown, next: () => void) => next();

  const verificationClient = createVerificationClient({ baseUrl: config.baseUrl, tokens, timeoutMs });
  const transactionClient = config.pgwAppId && config.pgwClientId
    ? createTransactionClient({ gatewayUrl: config.gatewayUrl, tokens: transactionTokens, timeoutMs, pgwAppId: config.pgwAppId, pgwClientId: config.pgwClientId })
    : undefined;
  const events = createMerchantEvents({ config, outbox: backend.eventOutbox, store, logger, metrics, now, timings: options.eventTimings });
  const verifyEvent = createEventVerifier(config.eventsSecrets ?? []);
  const leases = watchPaymentLeases({ payments: backend.payments, events, logger, now });
  const ctx: ProxyContext = {
    config,
    logger,
    store,
    bus,
    payments: backend.payments,
    leases,
    linkSessions: backend.linkSessions,
    removals: backend.removals,
    sealer,
    verifications: { start: (request) => timeUpstream(metrics.upstreamSeconds, 'verification', () => verificationClient.start(request)) },
    transactions: transactionClient && {
      submit: (request) => timeUpstream(metrics.upstreamSeconds, 'transaction', () => transactionClient.submit(request)),
    },
    enrichStart: options.enrichStart,
    onOutcome: options.onOutcome,
    onSavedAccountRemoved: options.onSavedAccountRemoved,
    events,
    originPolicy: createOriginPolicy(config.publicUrl, config.allowedOrigins, logger),
    rateLimiter,
    authFailureStore: backend.authFailureStore,
    metrics,
    lifecycle: { draining: false },
    storeOutage,
    credentials: {
      state: credentials,
      recheck: () => {
        credentials.started();
        tokens.getToken().catch(() => undefined); // recorded by observe(); nobody waits on it
      },
    },
    bankStepGraceMs: options.bankStepGraceMs ?? BANK_STEP_RETURN_GRACE_MS,
    now,
  };
  // One payer for POST /transactions and `proxy.pay()`: the same rules either way.
  const payer = ctx.transactions && createPayer(ctx, ctx.transactions);
  const router = createApp(ctx, payer, { hostedElementScript: options.hostedElementScript });
  const notificationRouter = config.notificationPublicUrl ? createNotificationApp(ctx) : undefined;
  const relays: Relay[] = [];

  return {
    router,
    notificationRouter,
    config,
    mountPath: config.mountPath,
    metrics,
    events,
    metricsHandler: metricsHandler(metrics.registry),
    attachRelay(server) {
      const relay = attachRelay(server, {
        path: `${config.mountPath}/ws`,
        store: releasedReader(store, now),
        bus,
        originPolicy: ctx.originPolicy,
        logger,
        clientAddress: createClientAddress(() => router.get('trust proxy')),
        maxSocketsPerSession: config.maxSocketsPerSession,
        maxSocketsPerClient: config.maxSocketsPerClient,
        maxSockets: config.maxSockets,
        storeOutage,
        now,
        ...options.relay,
      });
      relays.push(relay);
      metrics.addSocketSource(() => relay.connectionCount);
      return relay;
    },
    createLinkSession: async (input) => createLinkSession(ctx, parseOrThrow(CreateLinkSessionBody, input, 'The link session')),
    reconcilePayment: async (merchantTransactionId, input) => reconcilePayment(ctx, merchantTransactionId, parseOrThrow(ReconcileBody, input, 'The reconciliation')),
    async pay(input, options = {}) {
      if (!payer) throw new TypeError('proxy.pay needs the endpoint 4 settings: OBV_PGW_APP_ID and OBV_PGW_CLIENT_ID (sandbox mode fills them)');
      const key = options.idempotencyKey === undefined ? undefined : parseOrThrow(IdempotencyKey, options.idempotencyKey, 'The idempotency key', 'idempotencyKey');
      return payer(parseOrThrow(PaymentInput, input, 'The payment'), key);
    },
    readLink: (linkRef) => readLinkedAccount(ctx, parseOrThrow(z.string().max(64), linkRef, 'The link reference', 'linkRef')),
    async readPayment(merchantTransactionId) {
      const payment = await readPayment(ctx, parseOrThrow(text(128), merchantTransactionId, 'The order id', 'merchantTransactionId'));
      return payment && paymentView(payment);
    },
    async listEvents(query = {}) {
      const { after, limit, delivery } = query;
      return listEvents(events, parseOrThrow(EventListQuery, {
        ...(after !== undefined ? { after } : {}), ...(limit !== undefined ? { limit: String(limit) } : {}), ...(delivery !== undefined ? { delivery } : {}),
      }, 'The query'));
    },
    acknowledgeEvent: async (eventId) => acknowledgeEvent(events, parseOrThrow(EventId, eventId, 'The event id', 'eventId')),
    redeliverEvent: async (eventId) => redeliverEvent(events, parseOrThrow(EventId, eventId, 'The event id', 'eventId')),
    verifyEvent: (body, headers) => verifyEvent(body, headers),
    async sendTestEvents(type) {
      if (!config.eventsUrl || !config.eventsSecrets?.length) throw new TypeError('proxy.sendTestEvents needs OBV_EVENTS_URL and OBV_EVENTS_SECRETS');
      if (type !== undefined && !EVENT_TYPE_LIST.includes(type)) throw new TypeError(`proxy.sendTestEvents: unknown event type ${String(type)}`);
      return sendTestEvents({ eventsUrl: config.eventsUrl, eventsSecrets: config.eventsSecrets, now }, type);
    },
    async checkCredentials() {
      credentials.started();
      let failure: unknown;
      await tokens.getToken().catch((error: unknown) => (failure = error));
      const check = credentials.current;
      logCredentialCheck(logger, check, failure, config.baseUrl);
      return check;
    },
    markDraining() {
      ctx.lifecycle.draining = true;
    },
    async drain() {
      ctx.lifecycle.draining = true;
      await Promise.all(relays.splice(0).map((relay) => relay.close()));
    },
    async close() {
      storeOutage.close();
      leases.close();
      await this.drain();
      await events.close();
      await ownStorage?.close();
    },
  };
}
