// GET /connecting — the holding page the element opens in the new tab inside the click, before the bank's
// address is known: the consumer reads "Connecting to your bank…" instead of a blank, untitled tab, sees it
// working (a spinner, then "Still connecting…" if the provider is slow) and has a way back: "Back to
// checkout" closes the tab (the page's script, the same file as the return page's; the element then says
// the bank tab was closed and offers the bank's page again, or Cancel). The element navigates the tab on to the bank itself.
// GET /return/:returnRef — where the bank sends the consumer back (the returnURL, docs/UPSTREAM.md#d9-return-and-notification-urls). The URL carries
// the session's return reference, never its id (the provider sees this URL, and the id reads the
// outcome). The page says the step is done, tells the checkout tab over BroadcastChannel('obv-link')
// that *a* verification came back — no id, so other same-origin pages learn nothing they could use —
// and tries to close itself. Each waiting element then re-reads its own session. A session whose bank
// step is bound is decided here by sessions/bank-step.ts (`bankStepReturn`): a browser without its
// binding cookie ends it as completed elsewhere (nothing is ever released); the browser holding the
// cookie confirms it only once the outcome is stored and its grace has passed ("Finishing…", reloading,
// until then), and its success is then delivered from here.
// Strict CSP: the script is a separate same-origin file, the style is allowed by its hash.
import { createHash } from 'node:crypto';
import express, { type Router } from 'express';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { problem } from '../common/errors.ts';
import { ID_PATTERN, sessionLogRef } from '../common/ids.ts';
import { carriesBankStepCookie } from '../http/bank-step-cookie.ts';
import { bankStepReturn, type ReturnVerdict } from '../verifications/bank-step.ts';
import { CANCELLED_CODE, type SessionRecord } from '../storage/sessions.ts';
import { createOutcomeDelivery } from '../verifications/delivery.ts';
import { BANK_STEP_FINISHING_REFRESH_SECONDS } from '../config/limits.ts';
import { WarningLimiter } from '../common/log-limits.ts';
import { safeError } from '../common/logger.ts';
import { markerKey } from '../storage/markers.ts';
import { consumerPageText, type ConsumerPageText } from '../words/consumer-pages.ts';
import { COMMON_PROBLEMS, type Operation, STORE_PROBLEMS, UNROUTED_PROBLEMS } from '../openapi/operation.ts';

const lang = { description: 'The page\'s language: Spanish for `es…`, English otherwise', schema: z.string() };
const html = (description: string) => ({ description, content: { 'text/html': z.string() } });

export const returnPageOperations: Operation[] = [{
  method: 'get',
  path: '/return-page.js',
  operationId: 'returnPageScript',
  summary: 'The script of the return and holding pages (a file, so their CSP needs no inline script)',
  caller: 'browser',
  responses: { 200: { description: 'The script', content: { 'text/javascript': z.string() } } },
  problems: { ...UNROUTED_PROBLEMS },
}, {
  method: 'get',
  path: '/connecting',
  operationId: 'connectingPage',
  summary: '"Connecting to your bank…": the new tab\'s page before the bank\'s address is known',
  caller: 'browser',
  query: { lang },
  responses: { 200: html('The holding page (strict CSP; its one script is /return-page.js, for "Back to checkout")') },
  problems: { ...UNROUTED_PROBLEMS },
}, {
  method: 'get',
  path: '/return/:returnRef',
  operationId: 'returnPage',
  summary: 'Where the bank sends the consumer back',
  description: 'Says the bank step is done (or that the link was cancelled), tells the checkout tab over BroadcastChannel and closes itself. '
    + 'OBV_BIND_BANK_STEP: decides the bank step (docs/PROXY.md "Security notes"): "Finishing…" (reloading) while the starting browser\'s '
    + 'return cannot count yet, and 403 to a browser without the binding cookie.',
  caller: 'browser',
  pathParams: { returnRef: z.string().meta({ description: 'The session\'s return reference (never its id)' }) },
  query: { lang },
  responses: {
    200: html('"Bank step complete", "Bank linking was cancelled", or (OBV_BIND_BANK_STEP) "Finishing your bank step…" (it reloads itself)'),
    403: html('OBV_BIND_BANK_STEP: the bank step was completed in a browser other than the starting one ("Finish in the browser where you '
      + 'started": nothing is ever released), it was confirmed by the starting browser and this is another, or it expired unconfirmed'),
    404: html('An unknown reference, to a browser that asks for HTML'),
  },
  problems: { 404: 'An unknown reference, to a client that does not ask for HTML.', ...STORE_PROBLEMS, ...COMMON_PROBLEMS },
}];

/** The words of one page's title or message. */
type PageWords = { [Key in keyof ConsumerPageText]: ConsumerPageText[Key] extends string ? Key : never }[keyof ConsumerPageText];


const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;'
  + 'background:#f6f7f9;color:#1b1f24}main{max-width:28rem;padding:2rem;text-align:center}h1{font-size:1.25rem}'
  // The holding page: a spinner (still, without motion; in forced colours an arc in the text colour on the
  // page's, where every side would otherwise be painted alike), "Still connecting…" after a few seconds, and "Back to checkout".
  + '.spin{width:2rem;height:2rem;margin:0 auto;border:3px solid #c9d1de;border-top-color:#2554d8;border-radius:50%;'
  + 'animation:spin .8s linear infinite}@keyframes spin{to{rotate:1turn}}'
  + '.slow{visibility:hidden;animation:show 0s 6s forwards}@keyframes show{to{visibility:visible}}'
  + 'button{font:inherit;font-weight:600;min-height:2.75rem;margin-top:.5rem;padding:.6rem 1.25rem;color:inherit;background:transparent;'
  + 'border:1px solid #8a94a3;border-radius:8px;cursor:pointer}button:focus-visible{outline:2px solid #2554d8;outline-offset:2px}'
  + '@media (prefers-reduced-motion:reduce){.spin{animation:none}}'
  + '@media (prefers-color-scheme:dark){body{background:#15181d;color:#eef0f3}.spin{border-color:#3a4250;border-top-color:#8fb0ff}}'
  // Last, so that no colour above wins over the system ones.
  + '@media (forced-colors:active){.spin{forced-color-adjust:none;border-color:Canvas;border-top-color:CanvasText}}';
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/** Runs in the returned tab, and in the holding page for its "Back to checkout". */
const SCRIPT = `(() => {
  const back = document.getElementById('back');
  // The tab was opened by the checkout's script, so it may close itself; a browser that refuses is told to.
  if (back) back.onclick = () => {
    window.close();
    setTimeout(() => { document.getElementById('refused').hidden = false; }, 300);
  };
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

function page(lang: string, title: string, message: string, returned = false, refreshSeconds?: number): string {
  const data = returned ? ' data-returned' : '';
  const refresh = refreshSeconds === undefined ? '' : `<meta http-equiv="refresh" content="${refreshSeconds}">`;
  return `<!doctype html>
<html lang="${lang}"${data}>
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${refresh}
<title>${title}</title><style>${STYLE}</style>
${returned ? '<script src="../return-page.js" defer></script>' : ''}</head>
<body><main><h1>${title}</h1><p>${message}</p></main></body>
</html>
`;
}

/** "Connecting to your bank…": working (a spinner, then the slow provider's words) and a way back to the checkout. */
function connectingPage(text: ConsumerPageText, message: string): string {
  return `<!doctype html>
<html lang="${text.lang}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${text.connectingTitle}</title><style>${STYLE}</style>
<script src="return-page.js" defer></script></head>
<body><main><div class="spin" aria-hidden="true"></div><h1>${text.connectingTitle}</h1><p>${message}</p><p class="slow">${text.connectingSlow}</p>
<button id="back" type="button">${text.backToCheckout}</button><p id="refused" hidden>${text.backRefused}</p></main></body>
</html>
`;
}

export function returnPageRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  const completeDelivery = createOutcomeDelivery(ctx);
  const warnings = new WarningLimiter(ctx.logger);

  /**
   * Delivers what the decision released (the success, or the failure BANK_STEP_ELSEWHERE), read again
   * from the store. Each step is idempotent: a step that fails here (the onOutcome hook, the store) is
   * logged and finished by the next visit (the "Finishing…" page reloads) or a notification of the same
   * outcome.
   */
  async function deliverDecided(sessionId: string): Promise<boolean> {
    const current = await ctx.store.get(sessionId);
    if (!current?.outcome) return true;
    return completeDelivery(current).then(() => true, (error: unknown) => {
      ctx.logger.warn({ err: safeError(error), session: sessionLogRef(sessionId) },
        'the bank step\'s outcome could not be delivered from the return page yet; the next visit or notification finishes it');
      return false;
    });
  }

  /** What the page says, and with which status, for a bound session's verdict. */
  const VERDICT_PAGES: Record<Exclude<ReturnVerdict, 'confirmed'>, { status: number; title: PageWords; message: PageWords }> = {
    'elsewhere': { status: 403, title: 'otherBrowserTitle', message: 'otherBrowserMessage' },
    'other-browser': { status: 403, title: 'finishedElsewhereTitle', message: 'finishedElsewhereMessage' },
    'expired': { status: 403, title: 'expiredTitle', message: 'expiredMessage' },
    'finishing': { status: 200, title: 'finishingTitle', message: 'finishingMessage' },
  };

  /** pending → returned, told to the element's sockets. */
  async function markReturned(before: SessionRecord): Promise<void> {
    const after = await ctx.store.markReturned(before.sessionId);
    if (before.state === 'pending' && after?.state === 'returned') {
      await ctx.bus.publish({ type: 'state', sessionId: before.sessionId, state: 'returned' });
    }
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
    res.set(secureHeaders).type('html').send(connectingPage(text, message));
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
    if (before.browserBinding) {
      const withBinding = carriesBankStepCookie(req, before);
      const verdict = await bankStepReturn(ctx.store, { record: before, withBinding, now: ctx.now(), graceMs: ctx.bankStepGraceMs });
      // Released (the success) or ended (BANK_STEP_ELSEWHERE): delivered once, whoever visits.
      const delivered = verdict === 'finishing' || verdict === 'expired' || (await deliverDecided(before.sessionId));
      if (verdict === 'elsewhere') {
        warnings.warn('other-browser', { session: sessionLogRef(before.sessionId) },
          'the bank step came back in a browser that did not start it: completed elsewhere, nothing is released');
      }
      if (verdict !== 'confirmed' || !delivered) {
        if (withBinding && verdict === 'finishing') await markReturned(before);
        const shown = verdict === 'confirmed' ? VERDICT_PAGES.finishing : VERDICT_PAGES[verdict];
        const refresh = shown === VERDICT_PAGES.finishing ? BANK_STEP_FINISHING_REFRESH_SECONDS : undefined;
        res.status(shown.status).type('html').send(page(text.lang, text[shown.title], text[shown.message], false, refresh));
        return;
      }
    }
    await markReturned(before);
    res.status(200).type('html').send(page(text.lang, text.returnedTitle, text.returnedMessage, true));
  });
  return router;
}
