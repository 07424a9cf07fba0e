// GET /connecting — the holding page the element opens in the new tab inside the click, before the bank's
// address is known: the consumer reads "Connecting to your bank…" instead of a blank, untitled tab. No
// script: the element navigates the tab on to the bank itself.
// GET /return/:returnRef — where the bank sends the consumer back (the returnURL, docs/UPSTREAM.md#d9-return-and-notification-urls). The URL carries
// the session's return reference, never its id (the provider sees this URL, and the id reads the
// outcome). The page says the step is done, tells the checkout tab over BroadcastChannel('obv-link')
// that *a* verification came back — no id, so other same-origin pages learn nothing they could use —
// and tries to close itself. Each waiting element then re-reads its own session. A session whose bank
// step is bound (sessions/bank-step.ts) is confirmed here only for the browser holding its binding
// cookie; any other browser gets "finish where you started" and nothing is released.
// Strict CSP: the script is a separate same-origin file, the style is allowed by its hash.
import { createHash } from 'node:crypto';
import express, { type Router } from 'express';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { problem } from '../errors.ts';
import { ID_PATTERN, sessionLogRef } from '../sessions/ids.ts';
import { carriesBankStepCookie } from '../http/bank-step-cookie.ts';
import { confirmBankStep } from '../sessions/bank-step.ts';
import type { SessionRecord } from '../sessions/types.ts';
import { createOutcomeDelivery } from '../notifications/delivery.ts';
import { WarningLimiter } from '../log-limits.ts';
import { safeError } from '../logger.ts';
import { markerKey } from '../sessions/markers.ts';
import { consumerPageText } from '../pages/consumer-page-text.ts';
import { COMMON_PROBLEMS, type Operation, STORE_PROBLEMS } from '../openapi/operation.ts';

const lang = { description: 'The page\'s language: Spanish for `es…`, English otherwise', schema: z.string() };
const html = (description: string) => ({ description, content: { 'text/html': z.string() } });

export const returnPageOperations: Operation[] = [{
  method: 'get',
  path: '/return-page.js',
  operationId: 'returnPageScript',
  summary: 'The return page\'s script (a file, so the page\'s CSP needs no inline script)',
  caller: 'browser',
  responses: { 200: { description: 'The script', content: { 'text/javascript': z.string() } } },
  problems: {},
}, {
  method: 'get',
  path: '/connecting',
  operationId: 'connectingPage',
  summary: '"Connecting to your bank…": the new tab\'s page before the bank\'s address is known',
  caller: 'browser',
  query: { lang },
  responses: { 200: html('The holding page (strict CSP, no script)') },
  problems: {},
}, {
  method: 'get',
  path: '/return/:returnRef',
  operationId: 'returnPage',
  summary: 'Where the bank sends the consumer back',
  description: 'Says the bank step is done (or that the link was cancelled), tells the checkout tab over BroadcastChannel and closes itself.',
  caller: 'browser',
  pathParams: { returnRef: z.string().meta({ description: 'The session\'s return reference (never its id)' }) },
  query: { lang },
  responses: {
    200: html('"Bank step complete", or "Bank linking was cancelled"'),
    403: html('OBV_BIND_BANK_STEP: not the browser that started ("Finish in the browser where you started"); nothing is released'),
    404: html('An unknown reference, to a browser that asks for HTML'),
  },
  problems: { 404: 'An unknown reference, to a client that does not ask for HTML.', ...STORE_PROBLEMS, ...COMMON_PROBLEMS },
}];

/** The failure code the proxy stores when the consumer cancels at the checkout (POST /sessions/cancel). */
export const CANCELLED_CODE = 'CANCELLED';

const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;'
  + 'background:#f6f7f9;color:#1b1f24}main{max-width:28rem;padding:2rem;text-align:center}h1{font-size:1.25rem}'
  + '@media (prefers-color-scheme:dark){body{background:#15181d;color:#eef0f3}}';
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/** Runs in the returned tab. */
const SCRIPT = `(() => {
  if (!document.documentElement.hasAttribute('data-returned')) return;
  try {
    const channel = new BroadcastChannel('obv-link');
    channel.postMessage({ type: 'obv-returned' });
    channel.close();
  } catch (_) { /* no BroadcastChannel: the checkout still learns the result over its socket */ }
  setTimeout(() => window.close(), 150);
})();
`;

const CSP = `default-src 'none'; script-src 'self'; style-src 'sha256-${STYLE_HASH}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!);

function page(lang: string, title: string, message: string, returned = false): string {
  const data = returned ? ' data-returned' : '';
  return `<!doctype html>
<html lang="${lang}"${data}>
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>${STYLE}</style>
${returned ? '<script src="../return-page.js" defer></script>' : ''}</head>
<body><main><h1>${title}</h1><p>${message}</p></main></body>
</html>
`;
}

export function returnPageRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  const completeDelivery = createOutcomeDelivery(ctx);
  const warnings = new WarningLimiter(ctx.logger);

  /**
   * The starting browser is back: confirm its bank step and deliver a success stored meanwhile (the
   * notification may have come first). A delivery step that fails here (the onOutcome hook) is logged
   * and finished by the provider's retry, which the held notification's 503 keeps coming.
   */
  async function releaseBankStep(record: SessionRecord): Promise<void> {
    await confirmBankStep(ctx.store, record, ctx.now());
    const current = await ctx.store.get(record.sessionId);
    if (!current?.outcome) return;
    await completeDelivery(current).catch((error: unknown) => {
      ctx.logger.warn({ err: safeError(error), session: sessionLogRef(record.sessionId) },
        'the confirmed outcome could not be delivered from the return page; the provider\'s retry delivers it');
    });
  }

  router.get('/return-page.js', (_req, res) => {
    res.type('text/javascript').set({ 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' }).send(SCRIPT);
  });

  const secureHeaders = { 'content-security-policy': CSP, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' };

  // The shop's name is the operator's configuration, never the page's: escaped all the same.
  const merchantName = ctx.config.merchantName && escapeHtml(ctx.config.merchantName);
  router.get('/connecting', (req, res) => {
    const text = consumerPageText(req.query.lang);
    const message = merchantName ? text.connectingFromMerchant.replace('{merchant}', merchantName) : text.connectingMessage;
    res.set(secureHeaders).type('html').send(page(text.lang, text.connectingTitle, message));
  });

  router.get('/return/:returnRef', async (req, res) => {
    res.set(secureHeaders);
    const text = consumerPageText(req.query.lang);
    const returnRef = String(req.params.returnRef);
    const sessionId = ID_PATTERN.test(returnRef) ? await ctx.store.readMark(markerKey.returnRef(returnRef)) : undefined;
    const before = sessionId === undefined ? undefined : await ctx.store.get(sessionId);
    if (!before) {
      // A consumer's tab gets a page it can read; anything that does not ask for HTML gets the usual problem.
      if (req.accepts(['html', 'application/problem+json', 'json']) !== 'html') throw problem('not-found', 'No verification session has this id.');
      res.status(404).type('html').send(page(text.lang, text.unknownTitle, text.unknownMessage));
      return;
    }
    if (before.outcome?.status === 'failure' && before.outcome.code === CANCELLED_CODE) {
      // The consumer cancelled at the checkout: whatever the bank says now, no account is linked.
      res.status(200).type('html').send(page(text.lang, text.cancelledTitle, text.cancelledMessage));
      return;
    }
    if (before.browserBinding && !carriesBankStepCookie(req, before)) {
      // Not the browser that started: nothing is confirmed, and the page does not tell the checkout.
      warnings.warn('other-browser', { session: sessionLogRef(before.sessionId) }, 'the bank step came back in a browser that did not start it; the account is not released');
      res.status(403).type('html').send(page(text.lang, text.otherBrowserTitle, text.otherBrowserMessage));
      return;
    }
    if (before.browserBinding) await releaseBankStep(before);
    const after = await ctx.store.markReturned(before.sessionId);
    if (before.state === 'pending' && after?.state === 'returned') {
      await ctx.bus.publish({ type: 'state', sessionId: before.sessionId, state: 'returned' });
    }
    res.status(200).type('html').send(page(text.lang, text.returnedTitle, text.returnedMessage, true));
  });
  return router;
}
