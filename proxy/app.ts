// The Express sub-app the merchant mounts. A sub-app rather than a Router so it can carry its own
// `trust proxy` (req.ip → originatorIp and the rate limit) while still inheriting the parent's when unset.
// The route order, and what each route is given: the one service it calls and the HTTP plumbing around it.
import express, { type Express, type RequestHandler } from 'express';
import type { Store } from 'express-rate-limit';
import type { Logger } from 'pino';
import type { ProxyConfig } from './config/schema.ts';
import { merchantApiKeys } from './config/merchant-api-keys.ts';
import { WarningLimiter } from './common/log-limits.ts';
import type { ProxyMetrics } from './common/metrics.ts';
import { cors } from './http/cors.ts';
import { sendJsonInOneWrite } from './http/json-answer.ts';
import { merchantAuth } from './http/merchant-auth.ts';
import type { OriginPolicy } from './http/origin.ts';
import { notFoundHandler, problemHandler } from './http/problem.ts';
import { eventsRouter } from './routes/events.ts';
import { hostedPageRouter } from './routes/hosted-page.ts';
import { linkSessionsRouter } from './routes/link-sessions.ts';
import { linksRouter } from './routes/links.ts';
import { usersRouter } from './routes/users.ts';
import { notificationsRouter } from './routes/notifications.ts';
import { openApiRouter } from './routes/openapi.ts';
import { proxyOpenApiDocument } from './routes/operations.ts';
import { readinessRouter, type ReadinessDeps } from './routes/readiness.ts';
import { returnPageRouter } from './routes/return-page.ts';
import { savedAccountsRouter } from './routes/saved-accounts.ts';
import { sessionsRouter } from './routes/sessions.ts';
import { transactionsRouter } from './routes/transactions.ts';
import { verificationsRouter, type EnrichStart } from './routes/verifications.ts';
import type { Services } from './services.ts';
import type { StoreOutageLog } from './storage/outage-log.ts';

/** What the sub-app is built from: the services, and what the routes share around them. */
export interface AppParts {
  config: ProxyConfig;
  services: Omit<Services, 'close'>;
  /** Which browser origins may call (CORS on the browser-facing routes). */
  originPolicy: OriginPolicy;
  /** The per-client-address limit on starts and choices. */
  startLimit: RequestHandler;
  /** Where refused API keys are counted (Redis: across instances); undefined = in memory. */
  authFailureStore: Store | undefined;
  readiness: Omit<ReadinessDeps, 'logger' | 'metrics' | 'storeOutage'>;
  storeOutage: StoreOutageLog;
  metrics: ProxyMetrics;
  logger: Logger;
  enrichStart?: EnrichStart | undefined;
  /** The element's bundle for hosted pages (default: the package's build; routes/hosted-page.ts). */
  hostedElementScript?: string | undefined;
  now: () => number;
}

/** A bare sub-app with the proxy's `trust proxy`, if it has one. */
function subApp(config: Pick<ProxyConfig, 'trustProxy'>): Express {
  const app = express();
  app.disable('x-powered-by');
  // Every route's res.json writes its answer with its headers in one write, without an ETag (http/json-answer.ts).
  app.response.json = sendJsonInOneWrite;
  if (config.trustProxy !== undefined) app.set('trust proxy', config.trustProxy);
  // Every answer (JSON, problem+json, the HTML pages, the script) is read only as the type it says it is,
  // and kept by no cache unless its route says otherwise: almost every answer carries a session id, a
  // reference, a link token or an order, so no-store is the default, and only the proxy's own static files
  // (its scripts, the element's build, the OpenAPI document) set a cache of their own.
  app.use((_req, res, next) => {
    res.set({ 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' });
    next();
  });
  return app;
}

/**
 * Warns once when requests carry X-Forwarded-For but nothing is trusted: behind a load balancer every
 * shopper would then share the balancer's address (one rate limit, one socket cap, its originatorIp).
 */
function warnOnUntrustedForwarding(logger: Logger): RequestHandler {
  const warnings = new WarningLimiter(logger);
  return (req, _res, next) => {
    if (req.headers['x-forwarded-for'] !== undefined) {
      const trust = req.app.get('trust proxy') as unknown;
      if (trust === false || trust === 0 || trust === undefined) {
        warnings.once(
          'x-forwarded-for',
          {},
          'requests carry X-Forwarded-For but OBV_TRUST_PROXY is not set: every client behind that proxy shares its address ' +
            '(set OBV_TRUST_PROXY to the hop count or the proxy addresses)',
        );
      }
    }
    next();
  };
}

export function createApp(parts: AppParts): Express {
  const { config, services, logger, metrics, startLimit } = parts;
  const app = subApp(config);
  app.on('mount', () => {
    if (app.mountpath !== config.mountPath) {
      logger.warn(
        { mountedAt: app.mountpath, mountPath: config.mountPath },
        'the proxy is mounted at a different path than OBV_MOUNT_PATH; return and notification URLs will not reach it',
      );
    }
  });
  app.use(warnOnUntrustedForwarding(logger));

  app.use(readinessRouter({ ...parts.readiness, metrics, storeOutage: parts.storeOutage, logger }));
  app.use(openApiRouter(proxyOpenApiDocument(config.publicUrl.replace(/\/+$/, '') + config.mountPath)));
  // Server-to-server and top-level navigation routes: no CORS. Notifications live on their own
  // listener instead when notificationPublicUrl says so.
  if (!config.notificationPublicUrl) app.use(notificationsRouter(services));
  app.use(returnPageRouter({ ...services, config }));
  // The hosted link page: a page on the proxy's own origin, so no CORS either.
  app.use(hostedPageRouter({ ...services, config, hostedElementScript: parts.hostedElementScript, logger }));
  // Server-only routes, behind the merchant's API key: the page never reaches them.
  const apiKeys = merchantApiKeys(config);
  const auth =
    apiKeys.length > 0
      ? merchantAuth({ apiKeys, metrics, failureLimit: config.authFailureLimit, store: parts.authFailureStore, logger })
      : undefined;
  const { pay } = services.payments;
  if (auth) app.use(linkSessionsRouter(services, auth));
  if (auth) app.use(linksRouter(services, auth));
  if (auth) app.use(usersRouter(services, auth));
  if (auth && services.events.enabled) app.use(eventsRouter(services, auth));
  if (pay && auth) app.use(transactionsRouter({ ...services, pay }, auth));
  // Browser-facing JSON routes.
  app.use(['/verifications', '/sessions', '/saved-accounts'], cors(parts.originPolicy));
  app.use(
    verificationsRouter({
      ...services,
      config,
      rateLimiter: startLimit,
      enrichStart: parts.enrichStart,
      now: parts.now,
    }),
  );
  app.use(savedAccountsRouter({ ...services, config }));
  app.use(sessionsRouter({ ...services, rateLimiter: startLimit }));

  app.use(notFoundHandler);
  app.use(problemHandler(logger, metrics, parts.storeOutage));
  return app;
}

/** The provider's notifications alone, for a listener of their own that browser traffic cannot reach. */
export function createNotificationApp(
  parts: Pick<AppParts, 'config' | 'services' | 'readiness' | 'storeOutage' | 'metrics' | 'logger'>,
): Express {
  const { logger, metrics } = parts;
  const app = subApp(parts.config);
  app.use(readinessRouter({ ...parts.readiness, metrics, storeOutage: parts.storeOutage, logger }));
  app.use(notificationsRouter(parts.services));
  app.use(notFoundHandler);
  app.use(problemHandler(logger, metrics, parts.storeOutage));
  return app;
}
