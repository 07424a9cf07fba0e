// Renders the built element in each state, in a page of a given width and language, for the layout
// test (test/e2e/element-layout.test.ts), which checks the layout and saves the pictures as
// test-results/element-<state>-<lang>-<width>.png for people to look at. Everything outside the page is
// mocked with Playwright routes: the proxy's HTTP API, its WebSocket and the bank's page.
import type { Browser, BrowserContext, Page, WebSocketRoute } from 'playwright-core';
import { BANK_STEP_WORDS } from '../../proxy/words/bank-step.ts';

const ORIGIN = 'http://merchant.test';
// With the proxy's words for the states after the start, as the real proxy answers.
const SESSION = {
  sessionId: 's-1',
  consumerUrl: 'http://bank.test/consumer/v-1?t=x',
  expiresAt: new Date(Date.now() + 9e5).toISOString(),
  words: BANK_STEP_WORDS,
};
const ACCOUNT = {
  linkRef: 'ref_4321',
  accountLabel: 'Checking ••••4321',
  fiName: 'Sandbox Federal Bank',
  fiAccountType: 'CHECKING',
};

const REFUSAL = {
  title: 'Bad Request',
  status: 400,
  detail: 'Invalid verification request',
  errors: [{ path: 'consumer.email', message: 'Required' }],
};

/** The proxy's words for each language (proxy/words/outcomes.ts), as the socket delivers them. */
const WORDS = {
  en: {
    success: { displayLabel: 'Checking ••••4321', spokenLabel: 'Checking ending in 4321' },
    locked: {
      text: 'This account is locked at your bank. Link another account, or choose another way to pay; your bank can unlock this one.',
      lang: 'en',
    },
    cancelled: { text: 'You cancelled at your bank, so no account was linked.', lang: 'en' },
  },
  es: {
    success: { displayLabel: 'Corriente ••••4321', spokenLabel: 'Cuenta corriente terminada en 4321' },
    locked: {
      text: 'Esta cuenta está bloqueada en tu banco. Vincula otra cuenta o elige otra forma de pago; tu banco puede desbloquearla.',
      lang: 'es',
    },
    cancelled: { text: 'Cancelaste en tu banco, así que no se vinculó ninguna cuenta.', lang: 'es' },
  },
};
export type Lang = keyof typeof WORDS;

/** What the proxy's socket says after the n-th subscription (0-based); nothing = still pending. */
type SocketReply = (ws: WebSocketRoute, lang: Lang, subscription: number) => void;

export interface Scenario {
  name: string;
  attributes?: string;
  socket?: SocketReply;
  blockPopups?: boolean;
  proxyDown?: boolean;
  /** The proxy answers the start with a 400 problem (e.g. a consumer field the merchant did not supply). */
  proxyRefuses?: boolean;
  /** The proxy never answers the start: the element stays `starting`. */
  proxyHangs?: boolean;
  /** The proxy answers the start with a 503: its own (or the provider's) failure, not the shopper's network. */
  proxyFails?: boolean;
  /** Once waiting, the shopper closes the bank tab and presses "Go to the bank tab". */
  closeTab?: boolean;
  /** Sockets and polls never reach the proxy: the watch is lost (and resumes by itself later). */
  watchLost?: boolean;
  /** The states to reach in turn, each after a click on the main button; none = the first screen. */
  steps?: string[];
  /** The state of the picture when there are no steps. */
  state?: string;
  /** Shown once the last step is over (its state may be the one before the click, e.g. idle after a cancel at the bank). */
  shows?: (lang: Lang) => string;
}

const send = (ws: WebSocketRoute, message: object) =>
  ws.send(JSON.stringify({ sessionId: SESSION.sessionId, ...message }));
const success: SocketReply = (ws, lang) =>
  send(ws, { type: 'result', outcome: { status: 'success', ...ACCOUNT, ...WORDS[lang].success } });
const cancelledAtBank: SocketReply = (ws, lang) =>
  send(ws, {
    type: 'result',
    outcome: {
      status: 'failure',
      code: 'CONSUMER_CANCELLED',
      message: 'The consumer cancelled.',
      ...WORDS[lang].cancelled,
    },
  });
const locked: SocketReply = (ws, lang) =>
  send(ws, {
    type: 'result',
    outcome: {
      status: 'failure',
      code: 'ACCOUNT_LOCKED',
      message: 'This account is locked. Contact your bank.',
      ...WORDS[lang].locked,
    },
  });

export const SCENARIOS: Scenario[] = [
  { name: 'idle', state: 'idle' },
  { name: 'disabled', attributes: 'disabled', state: 'idle' },
  { name: 'starting', proxyHangs: true, steps: ['starting'] },
  { name: 'waiting', steps: ['waiting'] },
  { name: 'popup-blocked', blockPopups: true, steps: ['waiting'] },
  { name: 'success', socket: success, steps: ['success'] },
  { name: 'failure', socket: locked, steps: ['failure'] },
  // "Change", and the bank says no: "Try again" and Cancel (back to the account) side by side, or stacked.
  {
    name: 'failed-change',
    socket: (ws, lang, n) => (n === 0 ? success : locked)(ws, lang, n),
    steps: ['success', 'failure'],
  },
  { name: 'expired', socket: (ws) => send(ws, { type: 'expired' }), steps: ['expired'] },
  { name: 'network-error', proxyDown: true, steps: ['error'] },
  { name: 'configuration-error', attributes: 'link-token="sk_live_123"', state: 'error' },
  { name: 'proxy-refused', proxyRefuses: true, steps: ['error'] },
  // Recovery (issue 23): a closed bank tab, a cancel at the bank, a failing service, a lost connection.
  { name: 'bank-tab-closed', closeTab: true, steps: ['waiting'] },
  {
    name: 'cancelled-at-bank',
    socket: cancelledAtBank,
    steps: ['idle'],
    shows: (lang) => BANK_STEP_WORDS[lang].cancelled,
  },
  { name: 'service-error', proxyFails: true, steps: ['error'] },
  { name: 'connection-lost', watchLost: true, steps: ['error'] },
];

function pageHtml(scenario: Scenario, lang: Lang, width: number): string {
  // A scenario's attributes come first: of two equal attributes in HTML the first one counts.
  // A phone checkout has a 16 px margin; a desktop one a column in the middle.
  const frame = width < 600 ? '#frame{padding:16px}' : '#frame{width:34rem;margin:0 auto;padding:32px}';
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Checkout</title><style>body{margin:0;background:#f4f6f9;font-family:system-ui}${frame}</style>
<script type="module" src="/obv-link-account.js"></script></head>
<body><div id="frame"><obv-link-account ${scenario.attributes ?? ''} proxy-url="/obv" link-token="lt_${'checkout'.repeat(4)}"></obv-link-account></div></body></html>`;
}

async function route(
  context: BrowserContext,
  page: Page,
  bundle: string,
  scenario: Scenario,
  lang: Lang,
  width: number,
): Promise<void> {
  await page.route(`${ORIGIN}/**`, async (request) => {
    const url = new URL(request.request().url());
    if (url.pathname === '/')
      return request.fulfill({ contentType: 'text/html', body: pageHtml(scenario, lang, width) });
    if (url.pathname === '/obv-link-account.js')
      return request.fulfill({ contentType: 'text/javascript', body: bundle });
    if (url.pathname === '/obv/connecting')
      return request.fulfill({ contentType: 'text/html', body: '<title>Connecting</title>' });
    if (url.pathname === '/obv/verifications') {
      if (scenario.proxyHangs) return; // never answered: the element stays `starting`
      if (scenario.proxyDown) return request.abort('connectionrefused');
      if (scenario.proxyFails)
        return request.fulfill({
          status: 503,
          contentType: 'application/problem+json',
          body: JSON.stringify({ title: 'Service Unavailable', status: 503 }),
        });
      if (scenario.proxyRefuses)
        return request.fulfill({ status: 400, contentType: 'application/problem+json', body: JSON.stringify(REFUSAL) });
      return request.fulfill({ status: 201, contentType: 'application/json', body: JSON.stringify(SESSION) });
    }
    if (url.pathname === '/obv/sessions/lookup') {
      if (scenario.watchLost) return request.abort('connectionrefused');
      return request.fulfill({
        contentType: 'application/json',
        body: JSON.stringify({ ...SESSION, state: 'pending' }),
      });
    }
    return request.fulfill({ status: 404, body: '' });
  });
  await context.route('http://bank.test/**', (request) =>
    request.fulfill({ contentType: 'text/html', body: '<title>Bank</title><h1>Sign in to your bank</h1>' }),
  );
  let subscriptions = 0;
  await page.routeWebSocket(`ws://merchant.test/obv/ws`, (ws) => {
    if (scenario.watchLost) return void ws.close({ code: 1011 });
    ws.onMessage(() => {
      send(ws, { type: 'subscribed', state: 'pending' });
      scenario.socket?.(ws, lang, subscriptions++);
    });
  });
  if (scenario.blockPopups) {
    // Blocks the element's own window.open, and the one of its sandboxed frame.
    await context.addInitScript(() => {
      window.open = () => null;
      // The frame's window is a fresh about:blank, which init scripts do not reach: no frame, the page's open.
      Object.defineProperty(HTMLIFrameElement.prototype, 'contentWindow', { get: () => null });
    });
  }
}

const stateIs = (page: Page, state: string, timeout = 15_000) =>
  page.waitForFunction(
    (wanted) => document.querySelector('obv-link-account')?.getAttribute('state') === wanted,
    state,
    { timeout },
  );

/** Opens the scenario in a new context and brings the element to its state; close the context after. */
export async function showScenario(
  browser: Browser,
  bundle: string,
  scenario: Scenario,
  options: { lang: Lang; width: number; reducedMotion?: 'reduce'; forcedColors?: 'active' },
): Promise<{ context: BrowserContext; page: Page }> {
  const { lang, width } = options;
  const context = await browser.newContext({
    viewport: { width, height: 640 },
    deviceScaleFactor: width < 600 ? 2 : 1,
    reducedMotion: options.reducedMotion ?? 'no-preference',
    forcedColors: options.forcedColors ?? 'none',
  });
  const page = await context.newPage();
  await route(context, page, bundle, scenario, lang, width);
  await page.goto(`${ORIGIN}/`);
  const element = page.locator('obv-link-account');
  await element.locator('[part~="status"]').waitFor();
  for (const state of scenario.steps ?? []) {
    await element.locator('[part~="button"]').click();
    // A lost watch needs three sockets and six polls to give up (timing in widget/settings.ts): up to a minute.
    await stateIs(page, state, scenario.watchLost ? 90_000 : undefined);
  }
  if (scenario.closeTab) {
    // The bank tab the element opened (Playwright may learn of it a moment after the state changed).
    if (context.pages().length < 2) await context.waitForEvent('page', { timeout: 15_000 });
    await Promise.all(
      context
        .pages()
        .filter((other) => other !== page)
        .map((other) => other.close()),
    );
    // The element looks at its tab every second while waiting: it notices by itself ("Go to the bank tab"
    // finding it closed is tested in test/e2e/bank-tab.test.ts).
    await element.locator('[part~="link"]').waitFor();
  }
  await stateIs(page, scenario.state ?? scenario.steps!.at(-1)!);
  if (scenario.shows)
    await element.locator('[part~="status"]', { hasText: scenario.shows(lang) }).waitFor({ timeout: 15_000 });
  // Not the tab the element opened: the checkout is the page in the picture, with no button under the
  // pointer (the last click leaves it over the next state's button, which would show its hover shade).
  await page.bringToFront();
  await page.mouse.move(0, 0);
  return { context, page };
}
