// The proxy's own pages in the consumer's tab: the holding page (GET /connecting: "Connecting to your
// bank…") and the return page (GET /return/:returnRef: the bank step done, cancelled, finishing, or what a
// bound bank step's verdict says), their style, their one script and their words (words/consumer-pages.ts).
// Strict CSP: the script is a separate same-origin file, the style is allowed by its hash.
import { createHash } from 'node:crypto';
import type { ConsumerPageText } from '../words/consumer-pages.ts';
import { BANK_STEP_FINISHING_REFRESH_SECONDS } from '../config/limits.ts';
import { escapeHtml } from './html.ts';

/** What the return page says (verifications/return-visit.ts `ReturnPage`). */
export type ReturnPageKind =
  'unknown' | 'cancelled' | 'returned' | 'finishing' | 'elsewhere' | 'other-browser' | 'expired';

/** The words of one page's title or message. */
type PageWords = {
  [Key in keyof ConsumerPageText]: ConsumerPageText[Key] extends string ? Key : never;
}[keyof ConsumerPageText];

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;' +
  'background:#f6f7f9;color:#1b1f24}main{max-width:28rem;padding:2rem;text-align:center}h1{font-size:1.25rem}' +
  // The holding page: a spinner (still, without motion; in forced colours an arc in the text colour on the
  // page's, where every side would otherwise be painted alike), "Still connecting…" after a few seconds, and "Back to checkout".
  '.spin{width:2rem;height:2rem;margin:0 auto;border:3px solid #c9d1de;border-top-color:#2554d8;border-radius:50%;' +
  'animation:spin .8s linear infinite}@keyframes spin{to{rotate:1turn}}' +
  '.slow{visibility:hidden;animation:show 0s 6s forwards}@keyframes show{to{visibility:visible}}' +
  'button{font:inherit;font-weight:600;min-height:2.75rem;margin-top:.5rem;padding:.6rem 1.25rem;color:inherit;background:transparent;' +
  'border:1px solid #8a94a3;border-radius:8px;cursor:pointer}button:focus-visible{outline:2px solid #2554d8;outline-offset:2px}' +
  '@media (prefers-reduced-motion:reduce){.spin{animation:none}}' +
  '@media (prefers-color-scheme:dark){body{background:#15181d;color:#eef0f3}.spin{border-color:#3a4250;border-top-color:#8fb0ff}}' +
  // Last, so that no colour above wins over the system ones.
  '@media (forced-colors:active){.spin{forced-color-adjust:none;border-color:Canvas;border-top-color:CanvasText}}';
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/** Runs in the returned tab, and in the holding page for its "Back to checkout" (GET /return-page.js). */
export const RETURN_PAGE_SCRIPT = `(() => {
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

/** The policy of the holding and return pages: no inline script, the style by its hash. */
export const RETURN_PAGE_CSP = `default-src 'none'; script-src 'self'; style-src 'sha256-${STYLE_HASH}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

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

/**
 * "Connecting to your bank…": working (a spinner, then the slow provider's words) and a way back to the
 * checkout. The shop's name is the operator's configuration, never the page's: escaped all the same.
 */
export function connectingPage(text: ConsumerPageText, merchantName: string | undefined): string {
  const message = merchantName
    ? text.connectingFromMerchant.replace('{merchant}', escapeHtml(merchantName))
    : text.connectingMessage;
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

/** Each return page: its status, its words, whether it tells the checkout (`returned`), whether it reloads itself. */
const RETURN_PAGES: Record<
  ReturnPageKind,
  { status: number; title: PageWords; message: PageWords; returned?: true; refresh?: true }
> = {
  unknown: { status: 404, title: 'unknownTitle', message: 'unknownMessage' },
  cancelled: { status: 200, title: 'cancelledTitle', message: 'cancelledMessage' },
  returned: { status: 200, title: 'returnedTitle', message: 'returnedMessage', returned: true },
  elsewhere: { status: 403, title: 'otherBrowserTitle', message: 'otherBrowserMessage' },
  'other-browser': { status: 403, title: 'finishedElsewhereTitle', message: 'finishedElsewhereMessage' },
  expired: { status: 403, title: 'expiredTitle', message: 'expiredMessage' },
  finishing: { status: 200, title: 'finishingTitle', message: 'finishingMessage', refresh: true },
};

/** The return page for `kind`, in `text`'s language, and the status it is answered with. */
export function returnPage(kind: ReturnPageKind, text: ConsumerPageText): { status: number; html: string } {
  const shown = RETURN_PAGES[kind];
  return {
    status: shown.status,
    html: page(
      text.lang,
      text[shown.title],
      text[shown.message],
      shown.returned,
      shown.refresh ? BANK_STEP_FINISHING_REFRESH_SECONDS : undefined,
    ),
  };
}
