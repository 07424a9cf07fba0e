// The composition root: `createObvProxy(options)` reads the configuration, opens the storage (unless one
// is given), and wires the upstream clients, the domain services (services.ts), the Express sub-app
// (app.ts), the in-process calls (in-process.ts) and the WebSocket relay. Nothing else builds them.
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { ObvProxy, ObvProxyOptions } from './api.ts';
import { createApp, createNotificationApp } from './app.ts';
import { inProcessCalls } from './in-process.ts';
import { createServices } from './services.ts';
import { paymentLeaseMs } from './payments/orders.ts';
import { BANK_STEP_RETURN_GRACE_MS } from './config/limits.ts';
import { parseProxyConfig, type ProxyConfig } from './config/schema.ts';
import { isSandboxSealingKey } from './config/sealing-keys.ts';
import { protectionWarnings } from './config/warnings.ts';
import { createLogger } from './common/logger.ts';
import { createMetrics, metricsHandler } from './common/metrics.ts';
import { createClientAddress } from './http/client-address.ts';
import { createOriginPolicy, type OriginPolicy } from './http/origin.ts';
import { startLimit } from './http/start-limit.ts';
import { attachRelay, type Relay } from './relay/relay.ts';
import { openFileLimit } from './relay/socket-cap.ts';
import { createSealer } from './sealing/sealer.ts';
import { createOutboxCodec } from './sealing/outbox-codec.ts';
import { createStorage } from './storage/create-storage.ts';
import { StoreOutageLog } from './storage/outage-log.ts';
import type { Storage } from './storage/storage.ts';
import { createUpstream } from './upstream/upstream.ts';
import { shownReader } from './verifications/bank-step.ts';

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
  const ownStorage = options.backend
    ? undefined
    : createStorage({
        kind: config.storage,
        dataDir: config.dataDir,
        redisUrl: config.redisUrl,
        redisPrefix: config.redisPrefix,
        redisMinReplicas: config.redisMinReplicas,
        redisReplicaTimeoutMs: config.redisReplicaTimeoutMs,
        redisSentinels: config.redisSentinels,
        redisSentinelName: config.redisSentinelName,
        databaseUrl: config.databaseUrl,
        databaseSchema: config.databaseSchema,
        databasePoolSize: config.databasePoolSize,
        databaseStatementTimeoutMs: config.databaseStatementTimeoutMs,
        production: !config.sandbox,
        logger,
        now: options.now,
        // The schema requires keys outside sandbox mode; sandbox mode fills the published one.
        outboxCodec: createOutboxCodec(config.sealingKeys ?? []),
      });
  const storage = options.backend ?? ownStorage!;
  logBoot(logger, config, storage);
  // The schema requires keys outside sandbox mode; sandbox mode fills the published one.
  const sealer = createSealer(config.sealingKeys ?? []);
  const metrics = createMetrics({ defaultMetrics: options.defaultMetrics });
  const upstream = createUpstream({ config, metrics, tokenRetry: options.tokenRetry, logger, now });
  const storeOutage = new StoreOutageLog(logger, storage.sessionStore, now);
  const services = createServices({
    config,
    storage,
    upstream,
    sealer,
    metrics,
    logger,
    now,
    onOutcome: options.onOutcome,
    onSavedAccountRemoved: options.onSavedAccountRemoved,
    eventTimings: options.eventTimings,
    bankStepGraceMs: options.bankStepGraceMs ?? BANK_STEP_RETURN_GRACE_MS,
    storeOutage,
  });
  const originPolicy = createOriginPolicy(config.publicUrl, config.allowedOrigins, logger);
  const lifecycle = { draining: false };
  const readiness = { lifecycle, credentials: upstream.credentials, store: storage.sessionStore, now };
  const router = createApp({
    config,
    services,
    originPolicy,
    startLimit: startLimit({ limit: config.rateLimit, store: storage.rateLimitStore, metrics }),
    authFailureStore: storage.authFailureStore,
    readiness,
    storeOutage,
    metrics,
    logger,
    enrichStart: options.enrichStart,
    hostedElementScript: options.hostedElementScript,
    now,
  });
  const relays: Relay[] = [];
  /**
   * A shutdown's wait for the payments under way, each at most its worst case (its lease: every upstream
   * call it may make, each within the time-out): one cut at the provider would be `unknown` until reconciled.
   */
  async function settlePayments(): Promise<void> {
    const count = services.payments.inFlight;
    if (count === 0) return;
    const boundMs = paymentLeaseMs(config);
    logger.info({ payments: count, boundMs }, 'shutdown: waiting for the payments under way at the provider');
    const left = await services.payments.settled(boundMs);
    if (left > 0)
      logger.warn(
        { payments: left },
        'shutdown: payments still under way after their worst case; each turns unknown when its lease ends',
      );
  }
  const relayTo = (server: Server) =>
    startRelay(server, {
      config,
      storage,
      originPolicy,
      trustProxy: () => router.get('trust proxy'),
      storeOutage,
      logger,
      now,
      tuning: options.relay,
    });

  return {
    router,
    notificationRouter: config.notificationPublicUrl
      ? createNotificationApp({ config, services, readiness, storeOutage, metrics, logger })
      : undefined,
    config,
    mountPath: config.mountPath,
    metrics,
    events: services.events,
    metricsHandler: metricsHandler(metrics.registry),
    attachRelay(server) {
      const relay = relayTo(server);
      relays.push(relay);
      metrics.addSocketSource(() => relay.connectionCount);
      return relay;
    },
    ...inProcessCalls(services, config, now),
    checkCredentials: () => upstream.checkCredentials(),
    markDraining() {
      lifecycle.draining = true;
    },
    async drain() {
      lifecycle.draining = true;
      await Promise.all(relays.splice(0).map((relay) => relay.close()));
    },
    get paymentsInFlight() {
      return services.payments.inFlight;
    },
    async close() {
      storeOutage.close();
      await this.drain();
      // Before the storage closes: a payment's result is stored once the provider answers.
      await settlePayments();
      await services.close();
      await ownStorage?.close();
    },
  };
}

/** The relay on `server`, reading sessions as a browser may see them (a success held for its bank step is not shown yet). */
function startRelay(
  server: Server,
  parts: {
    config: ProxyConfig;
    storage: Storage;
    originPolicy: OriginPolicy;
    trustProxy: () => unknown;
    storeOutage: StoreOutageLog;
    logger: Logger;
    now: () => number;
    tuning: ObvProxyOptions['relay'];
  },
): Relay {
  const { config, storage, now } = parts;
  return attachRelay(server, {
    path: `${config.mountPath}/ws`,
    store: shownReader(storage.sessionStore, now),
    bus: storage.resultBus,
    originPolicy: parts.originPolicy,
    logger: parts.logger,
    clientAddress: createClientAddress(parts.trustProxy),
    maxSocketsPerSession: config.maxSocketsPerSession,
    maxSocketsPerClient: config.maxSocketsPerClient,
    maxSockets: config.maxSockets,
    storeOutage: parts.storeOutage,
    now,
    ...parts.tuning,
  });
}

const BOOT_LINE = {
  sqlite: 'state is kept in SQLite (one instance)',
  postgres: 'state is kept in PostgreSQL (shared by every instance)',
  redis: 'state is kept in Redis',
} as const;

/** What the boot log says: where state lives (loudly when a restart loses it), and each protection the configuration switches off. */
function logBoot(logger: Logger, config: ProxyConfig, storage: Storage): void {
  if (storage.kind === 'memory') {
    logger.warn(
      `storage is in memory (OBV_STORAGE=memory${config.sandbox ? '' : ', OBV_ALLOW_VOLATILE_STORAGE=true'}): a restart loses every payment record (an order could be paid twice), session and merchant event`,
    );
  } else {
    logger.info({ storage: storage.kind, location: storage.location }, BOOT_LINE[storage.kind]);
  }
  if (config.sandbox) {
    logger.warn(
      `sandbox mode (OBV_SANDBOX=true): plain http and the sandbox's published credentials are accepted${
        config.bindBankStep ? '' : ', and bank steps are not bound to the starting browser (OBV_BIND_BANK_STEP)'
      }; never use it in production`,
    );
  }
  for (const warning of protectionWarnings(config, openFileLimit())) logger.warn(warning);
  if (config.bindBankStep && config.allowedOrigins.length > 0) {
    logger.warn(
      { allowedOrigins: config.allowedOrigins },
      "OBV_BIND_BANK_STEP is on: pages on OBV_ALLOWED_ORIGINS can follow a verification but not start one (only pages on OBV_PUBLIC_URL's origin can)",
    );
  }
  if (!config.sandbox && !storage.sealsEvents) {
    logger.warn(
      'the storage handed to the proxy (backend) keeps merchant events in the clear: build it with createStorage({ …, outboxCodec: createOutboxCodec(sealingKeys) })',
    );
  }
  if ((config.sealingKeys ?? []).some(isSandboxSealingKey)) {
    logger.warn(
      "sandbox mode: stored accountTokens are sealed with the sandbox's published key (set OBV_SEALING_KEYS for a key of your own)",
    );
  }
}
