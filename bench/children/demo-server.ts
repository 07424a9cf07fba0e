// The demo (sandbox provider + proxy + checkout, demo/start-demo.ts) in its own process for the sections
// that drive Chromium: the bench's own event loop — playwright's client, which handles every protocol
// message of every page — then no longer delays the proxy's relay or the sandbox's notification. Until
// 2026-11-26 the demo ran inside the bench process and that shared loop showed up in the shopper's p99.
// The proxy's options come as JSON in BENCH_DEMO_PROXY (storage, data directory, Redis URL); the parent
// owns that storage and removes it, since this process simply exits when the parent lets it go.
import { ServerResponse, type IncomingMessage } from 'node:http';
import { startDemo } from '../../demo/start-demo.ts';
import { serveRpc } from '../lib/rpc.ts';
import {
  BARE_FIRST_TIME_PAGE,
  BARE_FIRST_TIME_PATH,
  BARE_RETURNING_PAGE,
  BARE_RETURNING_PATH,
  ELEMENT_FIRST_TIME_PAGE,
  ELEMENT_FIRST_TIME_PATH,
} from '../fixtures/bare-shopper-pages.ts';

const wallClock = (): number => performance.timeOrigin + performance.now();

// The sandbox provider sends its notifications with this process's global fetch: noting when one leaves
// is the least intrusive hook (a benchmark-only wrapper).
const sentAt: number[] = [];
const originalFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  if (String(input instanceof Request ? input.url : input).includes('/notifications/')) sentAt.push(wallClock());
  return originalFetch(input, init);
};

// The bank's redirect that ends a sample's bank step: when the sandbox writes its 303 to the sign-in
// POST. Taken here, not from the browser: the element closes the bank tab as soon as the outcome
// reaches it, which can be before the tab has read the 303 (the notification leaves as the 303 does).
const redirectedAt: number[] = [];
const writeHead = ServerResponse.prototype.writeHead;
ServerResponse.prototype.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
  if (args[0] === 303 && this.req.method === 'POST') redirectedAt.push(wallClock());
  return writeHead.apply(this, args);
} as ServerResponse['writeHead'];

const proxyOptions = JSON.parse(process.env.BENCH_DEMO_PROXY ?? '{}') as Record<string, unknown>;
// No rate limit: hundreds of starts and choices a minute from one address.
const demo = await startDemo({ port: 0, host: '127.0.0.1', proxy: { rateLimit: 0, ...proxyOptions } });

// The shopper sections' bare pages and the element's own page (fixtures/bare-shopper-pages.ts) on the
// checkout's origin, ahead of the demo's own handler: the same cookies and origin as the checkout, without
// its CSP (inline script).
const bare = new Map([
  [BARE_FIRST_TIME_PATH, BARE_FIRST_TIME_PAGE],
  [BARE_RETURNING_PATH, BARE_RETURNING_PAGE],
  [ELEMENT_FIRST_TIME_PATH, ELEMENT_FIRST_TIME_PAGE],
]);
const demoHandlers = demo.server.listeners('request') as ((...args: unknown[]) => void)[];
demo.server.removeAllListeners('request');
demo.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
  const page = req.method === 'GET' ? bare.get(req.url ?? '') : undefined;
  if (page === undefined) for (const handler of demoHandlers) handler.call(demo.server, req, res);
  else res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(page);
});

serveRpc({
  url: () => demo.url,
  /** Forgets the notifications and redirects noted so far (before a sample's bank sign-in). */
  resetNotifications: () => {
    sentAt.length = 0;
    redirectedAt.length = 0;
  },
  /** When the first notification since the last reset left, on the machine's wall clock. */
  firstNotificationAt: () => sentAt[0] ?? null,
  /** When the sandbox wrote the first 303 to a POST since the last reset (the bank's redirect), on the machine's wall clock. */
  firstRedirectAt: () => redirectedAt[0] ?? null,
});
