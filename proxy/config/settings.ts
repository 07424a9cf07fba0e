// Every setting of the proxy, one zod field each: its form, its default, and what it is for. The
// checks across settings (schema.ts) and the production guardrails (guardrails.ts) run over these.
import { z } from 'zod';
import {
  DEFAULT_DATA_DIR,
  DEFAULT_REDIS_PREFIX,
  DEFAULT_REDIS_REPLICA_TIMEOUT_MS,
  LINK_SESSION_TTL_MAX_MS,
  POSTGRES_DEFAULTS,
  POSTGRES_SCHEMA_NAME,
} from './limits.ts';
import { SealingKeyList } from './sealing-keys.ts';
import { MerchantApiKeyList, MIN_API_KEY_LENGTH } from './merchant-api-keys.ts';
import {
  Bool,
  Count,
  Duration,
  HostPortList,
  formatDuration,
  HttpUrl,
  OriginList,
  Port,
  RedirectSchemeList,
  StatusWords,
  Text,
  WEBHOOK_SECRET,
  WEBHOOK_SECRET_MESSAGE,
  WebhookSecretList,
} from './fields.ts';
import { TrustProxy } from './trust-proxy.ts';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const ConfigFields = z.object({
  /** `{base_url}`: host of the token and verification endpoints. */
  baseUrl: HttpUrl,
  /** `{gateway_url}`: host of the transaction endpoint. Defaults to `baseUrl`. */
  gatewayUrl: HttpUrl.optional(),
  clientId: Text,
  clientSecret: Text,
  tokenScope: Text.default('obv/token-request'),
  /** Scope for the transaction endpoint's token; when unset the verification token is reused. */
  transactionScope: Text.optional(),
  /** The proxy's own public origin (+ optional path prefix), as the provider and browsers reach it. */
  publicUrl: HttpUrl,
  /** Where the router is mounted; part of the per-session return/notification URLs and the WS path. */
  mountPath: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be a path such as /obv (no trailing slash), or empty')
    .default('/obv'),
  /** Standard Webhooks secret (`whsec_…`) shared with the provider. */
  webhookSecret: Text.regex(WEBHOOK_SECRET, WEBHOOK_SECRET_MESSAGE),
  allowedOrigins: OriginList.default([]),
  merchantId: Text,
  /** The shop's name as shoppers know it, shown on the proxy's "Connecting to your bank…" page. */
  merchantName: Text.max(100, 'must be at most 100 characters').optional(),
  /** Custom schemes a hosted page's `completionRedirectUri` may use (POST /link-sessions `hosted`), besides https. */
  hostedRedirectSchemes: RedirectSchemeList.default([]),
  merchantSubId: Text.optional(),
  product: Text.default('ACH'),
  transactionRegion: Text.optional(),
  pgwAppId: Text.optional(),
  pgwClientId: Text.optional(),
  /** Bearer key the merchant's server uses on the server-only routes (id `default`); the routes are off without a key. */
  merchantApiKey: z
    .string()
    .trim()
    .min(MIN_API_KEY_LENGTH, `must be at least ${MIN_API_KEY_LENGTH} characters`)
    .optional(),
  /** Several keys at once, each with an id logs and metrics name (`id:key,id:key`, or an array): rotation without downtime. */
  merchantApiKeys: MerchantApiKeyList.optional(),
  /** Where merchant events are POSTed (signed, retried); events are off without it. */
  eventsUrl: HttpUrl.optional(),
  /** `whsec_` secrets signing merchant events (comma list); during a rotation every one signs. */
  eventsSecrets: WebhookSecretList.optional(),
  /** `verificationStatus` values that mean success / failure (case-insensitive); anything else is refused. */
  successStatuses: StatusWords.default(['SUCCESS']),
  failureStatuses: StatusWords.default(['FAILURE']),
  /**
   * Endpoint 4's `transactionStatus` values (case-insensitive) of a 2xx answer that mean paid, and that
   * mean declined (nothing charged: the order may be paid again). Any other status of a 2xx answer
   * (a pending or unfamiliar one) leaves the payment `unknown`, for the merchant to reconcile.
   */
  paidTransactionStatuses: StatusWords.default(['APPROVED']),
  declinedTransactionStatuses: StatusWords.default(['DECLINED', 'REJECTED']),
  /** Endpoint 4 error codes that mean "the shopper must re-authorize this account" (docs/UPSTREAM.md D25). */
  reauthorizationCodes: StatusWords.default(['REAUTHORIZATION_REQUIRED']),
  /** Failed /transactions API-key attempts per client address per 15 minutes before 429s; 0 = no limit. */
  authFailureLimit: z.coerce.number<unknown>({ error: 'must be a whole number' }).int().nonnegative().default(10),
  /** As long as the sandbox bank's link (15 min): the checkout never waits on a link that can no longer finish. */
  sessionTtlMs: Duration.default(15 * 60_000),
  /**
   * Keys that seal every stored accountToken (AES-256-GCM): `id:base64` entries, the first seals, all
   * open. Required outside sandbox mode (sandbox mode uses a published key and says so).
   */
  sealingKeys: SealingKeyList.optional(),
  /** How long a link token from POST /link-sessions may start a verification; at most LINK_SESSION_TTL_MAX_MS. */
  linkSessionTtlMs: Duration.refine(
    (ms) => ms <= LINK_SESSION_TTL_MAX_MS,
    `must be at most ${formatDuration(LINK_SESSION_TTL_MAX_MS)} (a link token serves one checkout page)`,
  ).default(30 * 60_000),
  /** How long the proxy remembers an order it paid (one payment per order, GET /transactions/{id}). */
  paymentRetentionMs: Duration.default(30 * 24 * 3_600_000),
  upstreamTimeoutMs: Duration.default(10_000),
  /** Allow plain-http upstream URLs (the local sandbox). */
  sandbox: Bool.default(false),
  /**
   * Bind each bank step to the browser that started it (docs/PROXY.md "Security notes"): starts only from
   * pages on publicUrl's origin, successes held back until that browser reaches the return page.
   * Default: on outside sandbox mode.
   */
  bindBankStep: Bool.optional(),
  /**
   * PostgreSQL for several instances (storage/postgres/): `postgres://user:password@host:port/database`.
   * Setting it makes `postgres` the storage unless `storage` says otherwise.
   */
  databaseUrl: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' }).optional(),
  /** The schema the proxy's tables live in (created and migrated at start-up), so it can share a database. */
  databaseSchema: z
    .string()
    .regex(POSTGRES_SCHEMA_NAME, 'must be a lower-case SQL name: letters, digits and _, not starting with a digit')
    .default(POSTGRES_DEFAULTS.schema),
  /** PostgreSQL connections per instance at most (the pool; the relay's listener is one more). */
  databasePoolSize: Count.default(POSTGRES_DEFAULTS.poolSize),
  /** A PostgreSQL statement running longer is cancelled and its request answers 503 (statement_timeout). */
  databaseStatementTimeoutMs: Duration.default(POSTGRES_DEFAULTS.statementTimeoutMs),
  redisUrl: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).optional(),
  /** Prefix of every Redis key and of the events channel, so deployments can share one Redis. */
  redisPrefix: z
    .string()
    .regex(/^[A-Za-z0-9:._-]{1,32}$/, 'must be 1-32 characters of letters, digits, ":", ".", "_" or "-" (no spaces)')
    .default(DEFAULT_REDIS_PREFIX),
  /**
   * Redis replicas that must have received each money write (a payment's claim and result, an outcome, an
   * event) before the proxy answers (`WAIT`, storage/redis/replicas.ts). 0 (the default) waits for none:
   * a failover to a replica can then lose what it had not received, a claim included.
   */
  redisMinReplicas: z.coerce.number<unknown>({ error: 'must be a whole number' }).int().nonnegative().default(0),
  /** How long a money write waits for those replicas before it answers 503 (not done). */
  redisReplicaTimeoutMs: Duration.default(DEFAULT_REDIS_REPLICA_TIMEOUT_MS),
  /**
   * Redis Sentinel's addresses (`host:port,host:port`): the primary is whichever Sentinel names for
   * `redisSentinelName`, followed across failovers without a restart; `redisUrl` then gives only the
   * credentials, database and TLS.
   */
  redisSentinels: HostPortList.optional(),
  /** The name Sentinel monitors the primary under (`sentinel monitor <name> …`); required with redisSentinels. */
  redisSentinelName: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 letters, digits, ".", "_" or "-"')
    .optional(),
  /**
   * Where state lives (storage/create-storage.ts): `sqlite` (one instance, the default), `postgres` (several;
   * the default when databaseUrl is set), `redis` (several; the default when redisUrl is set), `memory`
   * (tests; production refuses it without allowVolatileStorage).
   */
  storage: z
    .enum(['sqlite', 'postgres', 'redis', 'memory'], { error: 'must be sqlite, postgres, redis or memory' })
    .optional(),
  /** The SQLite storage's directory (created 0700 if missing). */
  dataDir: Text.default(DEFAULT_DATA_DIR),
  /** Outside sandbox mode, `storage: memory` is refused unless this says a restart may lose payments and sessions. */
  allowVolatileStorage: Bool.default(false),
  /** Verification starts per client IP per minute; 0 turns the limit off. */
  rateLimit: z.coerce.number<unknown>({ error: 'must be a whole number' }).int().nonnegative().default(30),
  /** Express `trust proxy` (hop count or addresses/subnets); when unset, the app the router is mounted in decides. */
  trustProxy: TrustProxy.optional(),
  /** WebSockets per session; a new one replaces the oldest. */
  maxSocketsPerSession: Count.default(4),
  /** WebSockets per client address (after `trustProxy`); more are closed with 1013. */
  maxSocketsPerClient: Count.default(64),
  /** WebSockets on this instance; more are closed with 1013. Default 10,000, lowered to fit the file limit. */
  maxSockets: Count.optional(),
  /** http.Server `headersTimeout`: a client must send its headers within this. */
  headersTimeoutMs: Duration.default(10_000),
  /** http.Server `requestTimeout`: a whole request (headers and body) must arrive within this. */
  requestTimeoutMs: Duration.default(30_000),
  /**
   * Public URL of a separate listener for the provider's notifications (npm start: OBV_NOTIFICATION_PORT).
   * When set, notification URLs point there and the browser-facing router no longer serves them.
   */
  notificationPublicUrl: HttpUrl.optional(),
  /** npm start: port of the notification listener (needs notificationPublicUrl). */
  notificationPort: Port.optional(),
  /** npm start: port of the Prometheus /metrics listener; unset = no metrics listener. */
  metricsPort: Port.optional(),
  /** npm start: address the metrics listener binds to; loopback unless you say otherwise. */
  metricsHost: Text.default('127.0.0.1'),
  /** npm start: how long in-flight requests may take to finish after SIGTERM/SIGINT. */
  shutdownTimeoutMs: Duration.default(10_000),
  /**
   * npm start: after SIGTERM/SIGINT, how long /readyz answers 503 while everything else still works, so
   * load balancers stop sending before the listener closes. 0 closes at once.
   */
  drainWindowMs: z
    .union([z.literal(0), z.literal('0'), Duration], {
      error: 'must be 0 (close at once) or a duration: 5s, 1500ms, 1m, or a number of seconds',
    })
    .transform((value) => Number(value))
    .default(5_000),
  /**
   * npm start: the address to listen on; unset = every interface (a container behind a balancer),
   * or 127.0.0.1 in sandbox mode (its published secrets stay on this machine).
   */
  host: Text.optional(),
  logLevel: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  port: Port.default(3000),
});

export type ConfigFields = z.infer<typeof ConfigFields>;
