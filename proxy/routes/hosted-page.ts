// GET /hosted/:hostedRef — the hosted link page (link-sessions/hosted.ts, docs/HOSTED-LINK.md): for native
// apps (ASWebAuthenticationSession, Custom Tabs), webviews and links sent by e-mail, the proxy serves the
// element itself, on its own origin, for one link session. The bank step's binding holds as on any page of
// the proxy's origin: the element's start sets the binding cookie at the mount path in this browser.
// An unknown, expired or used page is a page too (404/410, in the shopper's language), never a blank.
import { maskedConsumer } from '../common/masking.ts';
import express, { type Router } from 'express';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config/schema.ts';
import type { LinkSessions } from '../link-sessions/link-sessions.ts';
import { loadElementScript, type ElementScript } from '../pages/element-script.ts';
import { HOSTED_PAGE_SCRIPT, hostedMessageHtml, hostedPageCsp, hostedPageHtml } from '../pages/hosted-page.ts';
import { hostedPageText, type HostedPageText } from '../words/hosted-page.ts';
import { COMMON_PROBLEMS, type Operation, STORE_PROBLEMS, UNROUTED_PROBLEMS } from '../openapi/operation.ts';
import { WarningLimiter } from '../common/log-limits.ts';

const html = (description: string) => ({ description, content: { 'text/html': z.string() } });

export const hostedPageOperations: Operation[] = [
  {
    method: 'get',
    path: '/hosted/:hostedRef',
    operationId: 'hostedPage',
    summary: 'The hosted link page of a link session made with `hosted` (open it in an app or send it to the shopper)',
    description:
      "The shop's name, the amount and the element for the link session, in its language; when the flow ends the page sends the shopper " +
      "to `hosted.completionRedirectUri` with `status` (and `state`, and a failure's `code`: a failure is shown with its retry first) and nothing else. Reopenable until the link session expires or its order is paid. " +
      'Strict CSP, SRI, `Referrer-Policy: no-referrer`, `Cache-Control: no-store`.',
    caller: 'browser',
    pathParams: {
      hostedRef: z.string().meta({ description: "The page's reference from `hostedUrl` (never the link token)" }),
    },
    responses: {
      200: html('The page'),
      404: html('"Link not recognised": no link session has this page'),
      410: html('"This bank link has expired", or "has been used" (its order is paid)'),
      503: html('"Bank linking is not available": the proxy has no build of the element (see `hostedElementScript`)'),
    },
    problems: { ...STORE_PROBLEMS, ...COMMON_PROBLEMS },
  },
  {
    method: 'get',
    path: '/hosted-page.js',
    operationId: 'hostedPageScript',
    summary: "The hosted page's script (a file, so the page's CSP needs no inline script)",
    caller: 'browser',
    responses: { 200: { description: 'The script', content: { 'text/javascript': z.string() } } },
    problems: { ...UNROUTED_PROBLEMS },
  },
  {
    method: 'get',
    path: '/assets/:elementFile',
    operationId: 'hostedElementScript',
    summary:
      "The element's bundle for the hosted page, under its content-hashed name (`obv-link-account.<hash>.js`, cached for good)",
    caller: 'browser',
    pathParams: {
      elementFile: z
        .string()
        .meta({ description: '`obv-link-account.<hash>.js`, as the page names it (with its SRI value)' }),
    },
    responses: { 200: { description: 'The element', content: { 'text/javascript': z.string() } } },
    problems: {
      404: "Another name than the page's (a new build has a new one), or no build of the element: the `not-found` problem.",
    },
  },
];

/** The shopper's language for a page without a link session: the browser's preference. */
function requestText(req: express.Request): HostedPageText {
  return hostedPageText(req.acceptsLanguages('en', 'es') || undefined);
}

export interface HostedPageRouteDeps {
  linkSessions: Pick<LinkSessions, 'hostedPage'>;
  config: Pick<ProxyConfig, 'publicUrl' | 'mountPath' | 'merchantName'>;
  /** The element's bundle (a path to obv-link-account.js); default: the package's build (pages/element-script.ts). */
  hostedElementScript?: string | undefined;
  logger: Logger;
}

export function hostedPageRouter(deps: HostedPageRouteDeps): Router {
  const router = express.Router();
  const { config } = deps;
  const warnings = new WarningLimiter(deps.logger);
  let element: ElementScript | undefined;
  const elementScript = () => (element ??= loadElementScript(deps.hostedElementScript));
  const base = `${config.publicUrl.replace(/\/+$/, '')}${config.mountPath}`;
  const basePath = new URL(base).pathname.replace(/\/+$/, '');
  const csp = hostedPageCsp(new URL(config.publicUrl).origin.replace(/^http/, 'ws'));
  const headers = {
    'content-security-policy': csp,
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
  };
  const merchantName = config.merchantName;

  router.get('/hosted-page.js', (_req, res) => {
    res.type('text/javascript').set('cache-control', 'public, max-age=300').send(HOSTED_PAGE_SCRIPT);
  });

  router.get('/assets/:elementFile', (req, res, next) => {
    const script = elementScript();
    if (!script || req.params.elementFile !== script.file) return next();
    res.type('text/javascript').set('cache-control', 'public, max-age=31536000, immutable').send(script.body);
  });

  router.get('/hosted/:hostedRef', async (req, res) => {
    const script = elementScript();
    const view = await deps.linkSessions.hostedPage(String(req.params.hostedRef));
    res.set(headers);
    if (view.kind === 'message') {
      const text = view.byRequest ? requestText(req) : hostedPageText(view.language);
      const [title, message] =
        view.message === 'expired'
          ? [text.expiredTitle, text.expiredMessage]
          : view.message === 'used'
            ? [text.usedTitle, text.usedMessage]
            : [text.unknownTitle, text.unknownMessage];
      res
        .status(view.status)
        .type('html')
        .send(hostedMessageHtml(text, title, message));
      return;
    }
    const { session } = view;
    const text = hostedPageText(session.language);
    if (!script) {
      warnings.once(
        'hosted-element',
        {},
        'the hosted link page has no element to serve: build the package (npm run build) or pass hostedElementScript',
      );
      res
        .status(503)
        .type('html')
        .send(hostedMessageHtml(text, text.unavailableTitle, text.unavailableMessage));
      return;
    }
    res
      .status(200)
      .type('html')
      .send(
        hostedPageHtml({
          text,
          merchantName,
          amount: session.amount,
          currency: session.currency,
          consumer: maskedConsumer(session.consumer),
          proxyUrl: base,
          linkToken: view.linkToken,
          language: session.language,
          redirects: view.redirects,
          expiresInMs: view.expiresInMs,
          element: { src: `${basePath}/assets/${script.file}`, integrity: script.integrity },
          scriptSrc: `${basePath}/hosted-page.js`,
        }),
      );
  });
  return router;
}
