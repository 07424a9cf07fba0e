// Renders the built element in each main state and saves test-results/element-<state>.png, for people
// to look at (run `npm run build` first, then `tsx test/browser/screenshots.ts`). Everything outside the
// page is mocked with Playwright routes: the proxy's HTTP API, its WebSocket and the bank's page.
import { mkdirSync, readFileSync } from 'node:fs';
import { chromium, type Page, type WebSocketRoute } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../../scripts/chromium.ts';

const ORIGIN = 'http://merchant.test';
const bundle = readFileSync('dist/obv-link-account.js', 'utf8');
const SESSION = { sessionId: 's-1', consumerUrl: 'http://bank.test/consumer/v-1?t=x', expiresAt: new Date(Date.now() + 9e5).toISOString() };
const ACCOUNT = { linkRef: 'ref_4321', accountLabel: 'Checking ••••4321', fiName: 'Sandbox Federal Bank', fiAccountType: 'CHECKING' };

const REFUSAL = { title: 'Bad Request', status: 400, detail: 'Invalid verification request', errors: [{ path: 'consumer.email', message: 'Required' }] };

type SocketReply = (ws: WebSocketRoute) => void;
interface Scenario {
  name: string;
  attributes?: string;
  lang?: string;
  /** What the proxy's socket says after a subscription; nothing = the outcome is still pending. */
  socket?: SocketReply;
  blockPopups?: boolean;
  proxyDown?: boolean;
  /** The proxy answers the start with a 400 problem (e.g. a consumer field the merchant did not supply). */
  proxyRefuses?: boolean;
  click?: boolean;
  /** The state to wait for before the picture. */
  state: string;
  /** A phone-sized page (360 px) instead of a 30rem column: long (Spanish) texts must wrap, not clip. */
  narrow?: boolean;
}

const result = (outcome: object): SocketReply => (ws) => ws.send(JSON.stringify({ type: 'result', sessionId: SESSION.sessionId, outcome }));
const scenarios: Scenario[] = [
  { name: 'idle', state: 'idle' },
  { name: 'waiting', click: true, state: 'waiting' },
  { name: 'popup-blocked', click: true, blockPopups: true, state: 'waiting' },
  { name: 'success', click: true, socket: result({ status: 'success', ...ACCOUNT }), state: 'success' },
  { name: 'failure', click: true, socket: result({ status: 'failure', code: 'ACCOUNT_LOCKED', message: 'This account is locked. Contact your bank.' }), state: 'failure' },
  { name: 'expired', click: true, socket: (ws) => ws.send(JSON.stringify({ type: 'expired', sessionId: SESSION.sessionId })), state: 'expired' },
  { name: 'network-error', click: true, proxyDown: true, state: 'error' },
  { name: 'configuration-error', attributes: 'amount="ten"', state: 'error' },
  { name: 'proxy-refused', click: true, proxyRefuses: true, state: 'error' },
  { name: 'success-es', lang: 'es', click: true, socket: result({ status: 'success', ...ACCOUNT }), state: 'success' },
  { name: 'disabled', attributes: 'disabled', state: 'idle' },
  { name: 'waiting-es-narrow', lang: 'es', narrow: true, click: true, state: 'waiting' },
  { name: 'popup-blocked-es-narrow', lang: 'es', narrow: true, click: true, blockPopups: true, state: 'waiting' },
  { name: 'success-es-narrow', lang: 'es', narrow: true, click: true, socket: result({ status: 'success', ...ACCOUNT }), state: 'success' },
  { name: 'network-error-es-narrow', lang: 'es', narrow: true, click: true, proxyDown: true, state: 'error' },
  { name: 'configuration-error-es-narrow', lang: 'es', narrow: true, attributes: 'amount="ten"', state: 'error' },
];

function pageHtml(scenario: Scenario): string {
  return `<!doctype html><html lang="${scenario.lang ?? 'en'}"><head><meta charset="utf-8"><title>Checkout</title>
<link rel="stylesheet" href="/page.css"><script type="module" src="/obv-link-account.js"></script></head>
<body><div id="frame"><obv-link-account ${scenario.attributes ?? ''} proxy-url="/obv" amount="49.99" currency="USD"></obv-link-account></div></body></html>`;
}

async function setUp(page: Page, scenario: Scenario): Promise<void> {
  await page.route(`${ORIGIN}/**`, async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === '/') return route.fulfill({ contentType: 'text/html', body: pageHtml(scenario) });
    if (url.pathname === '/page.css') {
      const frame = scenario.narrow ? '#frame{padding:12px}' : '#frame{width:30rem;padding:24px}';
      return route.fulfill({ contentType: 'text/css', body: `body{margin:0;background:#f4f6f9}${frame}` });
    }
    if (url.pathname === '/obv-link-account.js') return route.fulfill({ contentType: 'text/javascript', body: bundle });
    if (url.pathname === '/obv/verifications') {
      if (scenario.proxyDown) return route.abort('connectionrefused');
      if (scenario.proxyRefuses) return route.fulfill({ status: 400, contentType: 'application/problem+json', body: JSON.stringify(REFUSAL) });
      return route.fulfill({ status: 201, contentType: 'application/json', body: JSON.stringify(SESSION) });
    }
    return route.fulfill({ status: 404, body: '' });
  });
  await page.context().route('http://bank.test/**', (route) => route.fulfill({ contentType: 'text/html', body: '<title>Bank</title><h1>Sign in to your bank</h1>' }));
  await page.routeWebSocket(`ws://merchant.test/obv/ws`, (ws) => {
    ws.onMessage(() => {
      ws.send(JSON.stringify({ type: 'subscribed', sessionId: SESSION.sessionId, state: 'pending' }));
      scenario.socket?.(ws);
    });
  });
  if (scenario.blockPopups) await page.addInitScript(() => (window.open = () => null));
}

const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
mkdirSync('test-results', { recursive: true });
try {
  for (const scenario of scenarios) {
    const context = await browser.newContext({ deviceScaleFactor: 2, viewport: { width: scenario.narrow ? 360 : 640, height: 400 } });
    const page = await context.newPage();
    await setUp(page, scenario);
    await page.goto(`${ORIGIN}/`);
    const element = page.locator('obv-link-account');
    await element.locator('[part~="status"]').waitFor();
    if (scenario.click) await element.locator('[part~="button"]').click();
    await page.waitForFunction((state) => document.querySelector('obv-link-account')?.getAttribute('state') === state, scenario.state, { timeout: 5000 });
    // The picture of a waiting element should not catch the focus ring mid-transition or the spinner mid-frame.
    await page.bringToFront();
    await page.locator('#frame').screenshot({ path: `test-results/element-${scenario.name}.png`, animations: 'disabled' });
    console.log(`test-results/element-${scenario.name}.png`);
    await context.close();
  }
} finally {
  await browser.close();
}
