// The public types of the proxy object: what `createObvProxy` takes besides the configuration, and what
// it gives back (obv-proxy.ts builds it).
import type { Server } from 'node:http';
import type { Express, RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { ProxyConfig, ProxyConfigInput } from './config/schema.ts';
import type { ProxyMetrics } from './common/metrics.ts';
import type { OnSavedAccountRemoved } from './accounts/choice.ts';
import type { ForgottenUser } from './accounts/forget-user.ts';
import type { EventTimings, MerchantEvents } from './events/events.ts';
import type { ListedEvent } from './events/event-list.ts';
import type { TestEventResult } from './events/test-events.ts';
import type { DeliveryHeaders } from './events/verify-event.ts';
import type { CreatedLinkSession, CreateLinkSessionBody } from './link-sessions/link-sessions.ts';
import type { LinkedAccount } from './payments/linked-account.ts';
import type { OrderPayments } from './payments/orders.ts';
import type { PaymentAnswer, PaymentInput } from './payments/pay.ts';
import type { ReconcileBody, Reconciled } from './payments/reconcile.ts';
import type { Relay } from './relay/relay.ts';
import type { EnrichStart } from './routes/verifications.ts';
import type { EventType, MerchantEvent } from './storage/events.ts';
import type { Storage } from './storage/storage.ts';
import type { CredentialCheck } from './upstream/credential-check.ts';
import type { OnOutcome } from './verifications/delivery.ts';

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
  relay?: {
    subscribeTimeoutMs?: number;
    pingIntervalMs?: number;
    maxPayload?: number;
    expiryRetryMs?: number;
    recheckIntervalMs?: number;
  };
  /** Also collect prom-client's process metrics (CPU, memory, event loop) in `metrics`. Default true. */
  defaultMetrics?: boolean;
  /** Token endpoint retry tuning (tests). */
  tokenRetry?: { limit?: number; delayMs?: number };
  /** Clock (tests). */
  now?: () => number;
  /** The bank step's return grace (tests); default BANK_STEP_RETURN_GRACE_MS (verifications/bank-step.ts). */
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
   * Payments under way now (POST {mountPath}/transactions and `pay`), from their claim to their answer.
   * `close()` waits for them, each at most its worst case (4 × `upstreamTimeoutMs` + 5 s), before it
   * closes the storage: so call `close()` only once your own server stopped taking requests.
   */
  readonly paymentsInFlight: number;
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
  /**
   * Forgets a merchant user, for an erasure request (DELETE {mountPath}/users/{merchantUserId}): every
   * saved account sealed for them until now is refused from then on, their sessions and link sessions
   * (consent records, the consumer's name and e-mail) are deleted, the saved accounts and consent records in
   * merchant events erased, payments reduced to what a reconciliation needs; a `saved_account.removed`
   * event (`reason: "forgotten"`) per saved account the proxy held. Answers the counts, never the data; a
   * second call counts 0. Delete your own copies of the user's saved accounts too. A 400 ProblemError for
   * an invalid id. docs/GOING-TO-PRODUCTION.md#erasure-requests.
   */
  forgetUser(merchantUserId: string): Promise<ForgottenUser>;
  /** An order's payment and its earlier ones (GET {mountPath}/transactions/{id}), or undefined when none is on record. */
  readPayment(merchantTransactionId: string): Promise<OrderPayments | undefined>;
  /**
   * Merchant events in the order recorded, each with where its delivery stands (GET {mountPath}/events):
   * after the event `after`, at most `limit` (1–100, default 50), only those in the `delivery` states
   * (`undelivered`: pending or given up). A 400 ProblemError naming the field for an unknown `after` or a
   * bad value. Catching up: list `{delivery: 'undelivered'}`, handle each, `acknowledgeEvent` it.
   * These three calls throw a TypeError when events are off (no OBV_EVENTS_URL).
   */
  listEvents(query?: {
    after?: string;
    limit?: number;
    delivery?: 'undelivered' | 'pending' | 'failed';
  }): Promise<{ events: ListedEvent[]; hasMore: boolean }>;
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
  sendTestEvents(type?: EventType): Promise<TestEventResult[]>;
  /**
   * Closes the relays (1001, "going away"), waits for the payments under way (`paymentsInFlight`), then
   * closes the storage it created and its timers. Does not close your server.
   */
  close(): Promise<void>;
}
