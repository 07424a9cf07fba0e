// The Express sub-app the merchant mounts. A sub-app rather than a Router so it can carry its own
// `trust proxy` (req.ip → originatorIp and the rate limit) while still inheriting the parent's when unset.
import express, { type Express, type RequestHandler } from 'express';
import type { ProxyContext } from './context.ts';
import { WarningLimiter } from './common/log-limits.ts';
import { cors } from './http/cors.ts';
import { notFoundHandler, problemHandler } from './http/problem.ts';
import { eventsRouter } from './routes/events.ts';
import { linksRouter } from './routes/links.ts';
import { linkSessionsRouter } from './routes/link-sessions.ts';
import { merchantAuth } from './http/merchant-auth.ts';
import { merchantApiKeys } from './config/merchant-api-keys.ts';
import { notificationsRouter } from './routes/notifications.ts';
import { proxyOpenApiDocument } from './routes/operations.ts';
import { openApiRouter } from './routes/openapi.ts';
import { readinessRouter } from './routes/readiness.ts';
import { returnPageRouter } from './routes/return-page.ts';
import { hostedPageRouter } from './routes/hosted-page.ts';
import { sessionsRouter } from './routes/sessions.ts';
import { transactionsRouter } from './routes/transactions.ts';
import type { Payer } from './payments/pay.ts';
import { verificationsRouter } from './routes/verifications.ts';
import { savedAccountsRouter } from './routes/saved-accounts.ts';

/** A bare sub-app with the proxy's `trust proxy`, if it has one. */
function subApp(ctx: ProxyContext): Express {
  const app = express();
  app.disable('x-powered-by');
  if (ctx.config.trustProxy !== undefined) app.set('trust proxy', ctx.config.trustProxy);
  // Every answer (JSON, problem+json, the HTML pages, the script) is read only as the type it says it is.
  app.use((_req, res, next) => {
    res.set('x-content-type-options', 'nosniff');
    next();
  });
  return app;
}

/**
 * Warns once when requests carry X-Forwarded-For but nothing is trusted: behind a load balancer every
 * shopper would then share the balancer's address (one rate limit, one socket cap, its originatorIp).
 */
function warnOnUntrustedForwarding(ctx: ProxyContext): RequestHandler {
  const warnings = new WarningLimiter(ctx.logger);
  return (req, _res, next) => {
    if (req.headers['x-forwarded-for'] !== undefined) {
      const trust = req.app.get('trust proxy') as unknown;
      if (trust === false || trust === 0 || trust === undefined) {
        warnings.once('x-forwarded-for', {},
          'requests carry X-Forwarded-For but OBV_TRUST_PROXY is not set: every client behind that proxy shares its address '
          + '(set OBV_TRUST_PROXY to the hop count or the proxy addresses)');
      }
    }
    next();
  };
}

/** `hostedElementScript`: the element's bundle for hosted pages (default: the package's build; routes/hosted-page.ts). */
export function createApp(ctx: ProxyContext, pay: Payer | undefined, options: { hostedElementScript?: string | undefined } = {}): Express {
  const app = subApp(ctx);
  app.on('mount', () => {
    if (app.mountpath !== ctx.config.mountPath) {
      ctx.logger.warn({ mountedAt: app.mountpath, mountPath: ctx.config.mountPath },
        'the proxy is mounted at a different path than OBV_MOUNT_PATH; return and notification URLs will not reach it');
    }
  });
  app.use(warnOnUntrustedForwarding(ctx));

  app.use(readinessRouter(ctx));
  app.use(openApiRouter(proxyOpenApiDocument(ctx.config.publicUrl.replace(/\/+$/, '') + ctx.config.mountPath)));
  // Server-to-server and top-level navigation routes: no CORS. Notifications live on their own
  // listener instead when notificationPublicUrl says so.
  if (!ctx.config.notificationPublicUrl) app.use(notificationsRouter(ctx));
  app.use(returnPageRouter(ctx));
  // The hosted link page: a page on the proxy's own origin, so no CORS either.
  app.use(hostedPageRouter(ctx, options.hostedElementScript));
  // Server-only routes, behind the merchant's API key: the page never reaches them.
  const apiKeys = merchantApiKeys(ctx.config);
  const auth = apiKeys.length > 0
    ? merchantAuth({ apiKeys, metrics: ctx.metrics, failureLimit: ctx.config.authFailureLimit, store: ctx.authFailureStore, logger: ctx.logger })
    : undefined;
  if (auth) app.use(linkSessionsRouter(ctx, auth));
  if (auth) app.use(linksRouter(ctx, auth));
  if (auth && ctx.events.enabled) app.use(eventsRouter(ctx, auth));
  if (pay && auth) app.use(transactionsRouter(ctx, pay, auth));
  // Browser-facing JSON routes.
  app.use(['/verifications', '/sessions', '/saved-accounts'], cors(ctx.originPolicy));
  app.use(verificationsRouter(ctx));
  app.use(savedAccountsRouter(ctx));
  app.use(sessionsRouter(ctx));

  app.use(notFoundHandler);
  app.use(problemHandler(ctx.logger, ctx.metrics, ctx.storeOutage));
  return app;
}

/** The provider's notifications alone, for a listener of their own that browser traffic cannot reach. */
export function createNotificationApp(ctx: ProxyContext): Express {
  const app = subApp(ctx);
  app.use(readinessRouter(ctx));
  app.use(notificationsRouter(ctx));
  app.use(notFoundHandler);
  app.use(problemHandler(ctx.logger, ctx.metrics, ctx.storeOutage));
  return app;
}
