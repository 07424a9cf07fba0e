// The hosted link page's markup, style and script (routes/hosted-page.ts serves them). Strict CSP: the
// style is allowed by its hash, the scripts are same-origin files (the element's with SRI), nothing inline
// runs. The page's script only watches the element and, once the flow ends, sends the shopper to the
// completion URL the server already built for each status: it never composes a URL from what it sees.
import { createHash } from 'node:crypto';
import type { HostedPageText } from '../words/hosted-page.ts';
import { escapeHtml } from './html.ts';

const STYLE = [
  '*{box-sizing:border-box}',
  'body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24;',
  '-webkit-text-size-adjust:100%}',
  'main{max-width:30rem;margin:0 auto;padding:1.5rem 1rem 2rem}',
  '.shop{margin:0;font-size:.9375rem;color:#4a5361}',
  '.order{margin:0 0 1.25rem;font-weight:600}.order small{display:block;margin-top:.25rem;font-weight:400}',
  'h1{font-size:1.375rem;line-height:1.3;margin:.25rem 0 1rem}',
  '.amount{display:flex;justify-content:space-between;align-items:baseline;gap:1rem;margin:0 0 1.25rem;padding:.875rem 1rem;',
  'background:#fff;border:1px solid #d5d9e0;border-radius:.75rem}',
  '.amount dt{color:#4a5361}.amount dd{margin:0;font-size:1.25rem;font-weight:600}',
  'obv-link-account{display:block}',
  '.explainer{font-size:.875rem;color:#4a5361;margin:1rem 0 0}',
  '#done{margin-top:1.25rem;padding:1rem;background:#fff;border:1px solid #d5d9e0;border-radius:.75rem}',
  '#done h2{font-size:1.125rem;margin:0 0 .25rem}#done h2:focus{outline:none}#done p{margin:0 0 .75rem}.outcome{font-weight:600}',
  '[hidden]{display:none!important}',
  '@media (min-width:40rem){main{padding-top:4rem}}',
  '#continue{display:block;width:100%;min-height:48px;margin-top:1rem;border:0;border-radius:.5rem;background:#1d4ed8;color:#fff;',
  'font:inherit;font-weight:600;cursor:pointer}#continue:focus-visible{outline:3px solid #1b1f24;outline-offset:2px}',
  '#continue[hidden]{display:none}',
  '#give-up{display:block;width:100%;min-height:48px;margin-top:.75rem;border:1px solid #d5d9e0;border-radius:.5rem;background:#fff;',
  'color:#1b1f24;font:inherit;font-weight:600;cursor:pointer}#give-up:focus-visible{outline:3px solid #1b1f24;outline-offset:2px}',
  '#back{display:inline-block;min-height:44px;padding:.625rem 1rem;border-radius:.5rem;background:#1d4ed8;color:#fff;',
  'font-weight:600;text-decoration:none}',
  '#back:focus-visible{outline:3px solid #1b1f24;outline-offset:2px}',
  '.message{text-align:center;padding-top:3rem}',
  // The element follows the page's colour scheme (its light-dark() defaults): dark here in dark mode.
  ':root{color-scheme:light dark}',
  '@media (prefers-color-scheme:dark){body{background:#15181d;color:#eef0f3}.shop,.amount dt,.explainer{color:#b7bfcc}',
  '.amount,#done,#give-up{background:#1f242b;border-color:#3a414c;color:#eef0f3}#back,#continue{background:#93b4ff;color:#0b1020}',
  '#back:focus-visible,#continue:focus-visible,#give-up:focus-visible{outline-color:#eef0f3}}',
].join('');
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/**
 * Runs in the hosted page. Ends once: linked (obv-success after a bank step started here, or a saved
 * account confirmed with the page's Continue), cancelled (obv-cancel, or a cancel at the bank), expired (the
 * link session's time ran out while nothing is under way). Then it shows "You can close this page" with
 * a manual link, and navigates: an app's custom scheme may open nothing on a desktop, the page then stays
 * readable. A failure at the bank (or a bank session that timed out) does not end it: the element shows
 * it with its retry, and the page offers "Return to the app", which ends with status=failed (or expired)
 * and the failure's code. It composes nothing but that code (code-shaped, as the element got it) into the
 * completion URL the server built for each status. Opened again after a success (the element shows the
 * account it linked in this tab, or this browser remembers the link), it says so with the way back, and
 * navigates nowhere: Back from the app never bounces the shopper.
 */
export const HOSTED_PAGE_SCRIPT = `(() => {
  const root = document.getElementById('hosted');
  const element = document.querySelector('obv-link-account');
  const done = document.getElementById('done');
  const back = document.getElementById('back');
  const proceed = document.getElementById('continue');
  const giveUp = document.getElementById('give-up');
  if (!root || !element || !done || !back || !proceed || !giveUp) return;
  const left = Number(root.getAttribute('data-expires-in'));
  let ended = false;
  // A bank step (or a saved account's choice) made on this page: its success ends the page.
  let started = false;
  // What "Return to the app" sends after a failure: [status, code].
  let failed = ['failed', ''];
  const target = (status, code) => {
    const base = root.getAttribute('data-' + status);
    if (!base || !/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(code)) return base;
    const url = new URL(base);
    url.searchParams.set('code', code);
    return url.href;
  };
  // This browser remembers, until the link session ends, that this page linked an account: opened again in
  // a new tab it says so (keyed by a hash of the page's address, which is the link's capability).
  const memory = crypto.subtle.digest('SHA-256', new TextEncoder().encode(location.pathname))
    .then((hash) => 'obv-hosted-linked:' + btoa(String.fromCharCode(...new Uint8Array(hash))).slice(0, 22), () => '');
  const remember = () => memory.then((key) => { try { if (key && Number.isFinite(left)) localStorage.setItem(key, String(Date.now() + left)); } catch {} });
  const finish = (status, code, leave) => {
    if (ended) return;
    const url = target(status, code);
    if (!url) return;
    ended = true;
    proceed.hidden = giveUp.hidden = true;
    // Nothing more happens here: the app already has its answer (a "Change" now would start a link nobody waits for).
    element.inert = true;
    back.setAttribute('href', url);
    document.documentElement.setAttribute('data-ended', status);
    for (const node of done.querySelectorAll('[data-message]')) node.hidden = node.getAttribute('data-message') !== (leave ? 'leaving' : 'already');
    setTimeout(() => {
      element.hidden = true;
      for (const node of document.querySelectorAll('.explainer')) node.hidden = true;
      for (const node of done.querySelectorAll('[data-outcome]')) node.hidden = node.getAttribute('data-outcome') !== status;
      done.hidden = false;
      const heading = document.getElementById('done-title');
      if (heading) heading.focus();
    }, leave ? 1200 : 0);
    if (leave) window.location.assign(url);
  };
  const linked = () => {
    remember();
    finish('linked', '', true);
  };
  element.addEventListener('obv-start', () => {
    started = true;
    giveUp.hidden = true;
  });
  // A saved account is ready as soon as it is chosen (the first one at once): the shopper confirms it here.
  element.addEventListener('obv-success', () => {
    if (element.state === 'saved') proceed.hidden = false;
    else if (started) linked();
    else finish('linked', '', false);
  });
  element.addEventListener('obv-state-change', (event) => { if (event.detail.state !== 'saved') proceed.hidden = true; });
  // Continue is the shopper's confirmation (the element's confirm()): only then does the merchant hear of the
  // chosen account (a page opened and left, by a scanner too, releases nothing). A failed one: the element
  // says why, and the button stays to try again.
  proceed.addEventListener('click', () => {
    if (element.state !== 'saved' || !element.account || proceed.disabled) return;
    proceed.disabled = true;
    element.confirm()
      .then((account) => { if (account) linked(); }, () => undefined)
      .finally(() => { proceed.disabled = false; });
  });
  element.addEventListener('obv-cancel', () => finish('cancelled', '', true));
  const offerReturn = (status, code) => {
    failed = [status, code];
    giveUp.hidden = false;
  };
  element.addEventListener('obv-failure', (event) => {
    const code = (event.detail && event.detail.code) || '';
    if (/^(CONSUMER_)?CANCELLED$/.test(code)) finish('cancelled', '', true);
    else offerReturn('failed', code);
  });
  element.addEventListener('obv-error', (event) => { if (event.detail && event.detail.kind === 'expired') offerReturn('expired', ''); });
  giveUp.addEventListener('click', () => finish(failed[0], failed[1], true));
  memory.then((key) => {
    let until = 0;
    try { until = Number(key && localStorage.getItem(key)); } catch {}
    if (until > Date.now() && !started) finish('linked', '', false);
  });
  const expire = () => {
    if (ended) return;
    // A bank step under way runs to its own end (its session has its own expiry).
    const state = element.state;
    if (state === 'waiting' || state === 'starting') { setTimeout(expire, 5000); return; }
    finish('expired', '', true);
  };
  if (Number.isFinite(left)) setTimeout(expire, Math.max(0, Math.min(left, 2147483647)));
})();
`;

/** The element's file as the page names it. */
export interface PageElementScript {
  src: string;
  integrity: string;
}

export interface HostedPageInput {
  text: HostedPageText;
  /** OBV_MERCHANT_NAME (escaped here, like every value). */
  merchantName: string | undefined;
  amount: string;
  currency: string;
  /** Whose order it is: the declared consumer, masked (common/masking.ts). */
  consumer: string;
  /** The element's `proxy-url`: the proxy's public base and mount path. */
  proxyUrl: string;
  linkToken: string;
  /** The link session's language (the element's words and the bank's page). */
  language: string | undefined;
  /** Where the page sends the shopper for each way the flow ends (link-sessions/hosted.ts `completionRedirect`), in the order of `text.outcomes`. */
  redirects: Record<keyof HostedPageText['outcomes'], string>;
  /** How long the link session still lives, ms. */
  expiresInMs: number;
  element: PageElementScript;
  /** The page script's path. */
  scriptSrc: string;
}

/**
 * The amount as a US shopper reads it in their language (`$12.50` in English and in Spanish: es-US, not
 * Spain's `12,50 US$`; the provider serves the US only); as given when Intl cannot.
 */
export function formatAmount(amount: string, currency: string, lang: string): string {
  try {
    return new Intl.NumberFormat(`${lang}-US`, { style: 'currency', currency }).format(Number(amount));
  } catch {
    return `${amount} ${currency}`;
  }
}

/** The policy of every hosted page answer; `socketOrigin` is the proxy's ws(s) origin for older browsers. */
export function hostedPageCsp(socketOrigin: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'sha256-${STYLE_HASH}'`,
    `connect-src 'self' ${socketOrigin}`,
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

function shell(lang: string, title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="${lang}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style>${head}</head>
<body>${body}</body>
</html>
`;
}

/** The page with the element, for one link session. */
export function hostedPageHtml(input: HostedPageInput): string {
  const { text } = input;
  const from = input.merchantName ? text.fromMerchant.replace('{merchant}', input.merchantName) : text.fromShop;
  const statuses = Object.keys(input.redirects) as (keyof HostedPageText['outcomes'])[];
  const redirects = statuses.map((status) => ` data-${status}="${escapeHtml(input.redirects[status])}"`).join('');
  const language = input.language ? ` language="${escapeHtml(input.language)}"` : '';
  const head =
    `<script type="module" src="${escapeHtml(input.element.src)}" integrity="${input.element.integrity}" crossorigin="anonymous"></script>` +
    `<script src="${escapeHtml(input.scriptSrc)}" defer></script>`;
  const body = `<main id="hosted"${redirects} data-expires-in="${Math.max(0, Math.floor(input.expiresInMs))}">
<p class="shop">${escapeHtml(from)}</p>
<h1>${escapeHtml(text.title)}</h1>
<dl class="amount"><dt>${escapeHtml(text.amountLabel)}</dt><dd>${escapeHtml(formatAmount(input.amount, input.currency, text.lang))}</dd></dl>
<p class="order" id="order">${escapeHtml(text.orderFor.replace('{consumer}', input.consumer))}<br><small>${escapeHtml(text.notYours)}</small></p>
<obv-link-account proxy-url="${escapeHtml(input.proxyUrl)}" link-token="${escapeHtml(input.linkToken)}"${language}></obv-link-account>
<button type="button" id="continue" hidden>${escapeHtml(text.continueWithAccount)}</button>
<button type="button" id="give-up" hidden>${escapeHtml(text.returnToApp)}</button>
<p class="explainer">${escapeHtml(text.explainer)}</p>
<section id="done" hidden aria-labelledby="done-title"><h2 id="done-title" tabindex="-1">${escapeHtml(text.doneTitle)}</h2>
${statuses.map((status) => `<p class="outcome" data-outcome="${status}" hidden>${escapeHtml(text.outcomes[status])}</p>`).join('')}
<p data-message="leaving">${escapeHtml(text.doneMessage)}</p><p data-message="already" hidden>${escapeHtml(text.alreadyMessage)}</p>
<a id="back" href="#">${escapeHtml(text.returnToApp)}</a></section>
</main>`;
  return shell(text.lang, `${text.title} · ${input.merchantName ?? ''}`.replace(/ · $/, ''), head, body);
}

/** A page that only says something (unknown, expired, used, unavailable): no script at all. */
export function hostedMessageHtml(text: HostedPageText, title: string, message: string): string {
  return shell(
    text.lang,
    title,
    '',
    `<main class="message"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></main>`,
  );
}
