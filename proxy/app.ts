// The Express sub-app the merchant mounts. A sub-app rather than a Router so it can carry its own
// `trust proxy` (req.ip → originatorIp and the rate limit) while still inheriting the parent's when unset.
import express, { type Express } from 'express';
import type { ProxyContext } from './context.ts';
import { cors } from './routes/cors.ts';
import { notFoundHandler, problemHandler } from './routes/problem.ts';
import { linksRouter } from './routes/links.ts';
import { notificationsRouter } from './routes/notifications.ts';
import { returnPageRouter } from './routes/return-page.ts';
import { sessionsRouter } from './routes/sessions.ts';
import { transactionsRouter } from './routes/transactions.ts';
import { verificationsRouter } from './routes/verifications.ts';

export function createApp(ctx: ProxyContext): Express {
  const app = express();
  app.disable('x-powered-by');
  if (ctx.config.trustProxy !== undefined) app.set('trust proxy', ctx.config.trustProxy);
  app.on('mount', () => {
    if (app.mountpath !== ctx.config.mountPath) {
      ctx.logger.warn({ mountedAt: app.mountpath, mountPath: ctx.config.mountPath },
        'the proxy is mounted at a different path than OBV_MOUNT_PATH; return and notification URLs will not reach it');
    }
  });

  app.get('/healthz', (_req, res) => {
    res.set('cache-control', 'no-store').json({ status: 'ok' });
  });
  // Server-to-server and top-level navigation routes: no CORS.
  app.use(notificationsRouter(ctx));
  app.use(returnPageRouter(ctx));
  // Server-only routes, behind the merchant's API key: the page never reaches them.
  const apiKey = ctx.config.merchantApiKey;
  if (apiKey) app.use(linksRouter(ctx, apiKey));
  if (ctx.transactions && apiKey) app.use(transactionsRouter(ctx, ctx.transactions, apiKey));
  // Browser-facing JSON routes.
  app.use(['/verifications', '/sessions'], cors(ctx.originPolicy));
  app.use(verificationsRouter(ctx));
  app.use(sessionsRouter(ctx));

  app.use(notFoundHandler);
  app.use(problemHandler(ctx.logger));
  return app;
}
