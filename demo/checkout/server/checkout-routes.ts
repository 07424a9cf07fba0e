// The demo merchant's own routes: the checkout page (with a link session the server makes for the order),
// the Pay form's POST (which redeems the element's link reference server to server) and the result page. Post/Redirect/Get, so a reload never pays twice.
// The page holds no payment credential: only the link reference, which the proxy honours for this
// shopper's order and amount only, and once.
import express, { type ErrorRequestHandler, type Response, type Router } from 'express';
import { z } from 'zod';
import type { AssetMap } from './assets.ts';
import { OrderBook } from './orders.ts';
import { checkoutPage, notFoundPage, resultPage } from './pages.ts';
import { securityHeaders } from './security-headers.ts';
import { SHOP, decimalAmount, type Order } from './orders.ts';
import type { TransactionClient } from './transactions.ts';
import { SavedAccountBook } from './saved-accounts.ts';
import { randomBytes } from 'node:crypto';

export interface CheckoutRoutesOptions {
  assets: AssetMap;
  proxy: TransactionClient;
  orders?: OrderBook;
  /** The shop's saved accounts (its "database"); the proxy's onSavedAccountRemoved should remove from it too. */
  savedAccounts?: SavedAccountBook;
  /** Sandbox only: the provider's test control that makes every linked account stale (the "Reconnect" path). */
  markAccountsStale?: () => void;
  /** The origins the shop is served under (its CSP names the page's own WebSocket origin). */
  pageOrigins: readonly string[];
}

/** What the Pay form posts: the order and the element's link reference (its form value). */
export const PaymentForm = z.object({
  orderId: z.string().regex(/^NR-[0-9A-F]{12}$/, 'not an order id of this shop'),
  linkRef: z.string().min(1, 'link a bank account first').max(128),
});
export type PaymentForm = z.infer<typeof PaymentForm>;

/** The shop's one way to answer an error: RFC 9457 problem details, `type` about:blank. */
function sendProblem(
  res: Response,
  status: number,
  title: string,
  detail: string,
  errors?: { path: string; message: string }[],
): void {
  res
    .status(status)
    .type('application/problem+json')
    .send({ type: 'about:blank', title, status, detail, ...(errors ? { errors } : {}) });
}

/** The shopper's open order lives in a cookie, like a cart: a reload of the checkout keeps the order. */
export const ORDER_COOKIE = 'nr_order';

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** The shopper this browser is (a long-lived cookie): their saved accounts follow them from order to order. */
export const SHOPPER_COOKIE = 'nr_shopper';

const SHOPPER_ID = /^shopper-([A-Za-z0-9_-]{16})$/;

/**
 * The shopper's merchant user id: from their cookie, else the shopper of the open order their order
 * cookie names, else (a first visit) a new one.
 */
function shopperOf(req: express.Request, order: Order | undefined): string {
  const id = cookieValue(req.headers.cookie, SHOPPER_COOKIE) ?? '';
  if (SHOPPER_ID.test(`shopper-${id}`)) return `shopper-${id}`;
  return order && SHOPPER_ID.test(order.merchantUserId)
    ? order.merchantUserId
    : `shopper-${randomBytes(12).toString('base64url')}`;
}

/** The order this browser is shopping for (its cookie); a request can act on no other order. */
export function shoppersOrderId(req: express.Request): string | undefined {
  return cookieValue(req.headers.cookie, ORDER_COOKIE);
}

/**
 * A form post from another site (CSRF) is refused: browsers say where a request comes from in
 * Sec-Fetch-Site, and older ones at least in Origin. The order cookie is SameSite=Lax as well.
 */
function crossSite(req: express.Request): boolean {
  const site = req.get('sec-fetch-site');
  if (site !== undefined) return site !== 'same-origin';
  const origin = req.get('origin');
  return origin !== undefined && origin !== `${req.protocol}://${req.get('host')}`;
}

function sendHtml(res: express.Response, status: number, body: string): void {
  res.status(status).type('html').setHeader('Cache-Control', 'no-store').send(body);
}

/** Builds the merchant's router: mount it at `/` next to the proxy's `/obv`. */
export function createCheckoutRoutes(options: CheckoutRoutesOptions): Router {
  const orders = options.orders ?? new OrderBook();
  const saved = options.savedAccounts ?? new SavedAccountBook();
  const router = express.Router();
  router.use(securityHeaders(options.pageOrigins));

  router.get('/assets/{*path}', (req, res, next) => {
    const asset = options.assets.get(req.path.slice('/assets/'.length));
    if (!asset) return next();
    res.type(asset.contentType).setHeader('Cache-Control', 'no-cache').send(asset.body);
  });

  /** How long before its expiry a link session is replaced rather than handed to a page again. */
  const LINK_SESSION_MARGIN_MS = 5 * 60_000;

  /**
   * The link session for `order`: who pays, for what, in which language — all from the shop's records —
   * and the shopper's saved accounts (or the one the bank wants reconnected), with saving allowed. One per
   * order and language, reused while valid, so a reload resumes a bank step under way; a reconnect drops
   * it (order.linkSession = undefined) for a new one.
   */
  async function linkTokenFor(order: Order, language: 'en' | 'es'): Promise<string> {
    const current = order.linkSession;
    if (!current || current.language !== language || current.expiresAt - LINK_SESSION_MARGIN_MS <= Date.now()) {
      const accounts = saved.list(order.merchantUserId);
      // A stale account (the bank refused a payment with it) is offered as Reconnect, this order's or the
      // shopper's first, never preselected in the list where Pay would bounce; other stale ones wait.
      const reconnect =
        accounts.find((account) => account.accountId === order.reconnect) ?? accounts.find((account) => account.stale);
      const created = await options.proxy.createLinkSession({
        merchantUserId: order.merchantUserId,
        merchantTransactionId: order.orderId,
        amount: decimalAmount(order.totalCents),
        currency: SHOP.currency,
        consumer: { firstName: SHOP.shopper.firstName, lastName: SHOP.shopper.lastName, email: SHOP.shopper.email },
        language: language === 'es' ? 'es-US' : 'en-US',
        // A reconnect is no dead end: the shopper's other saved accounts come with it, and saving is allowed
        // (the bank may link another account: with consent, it is saved as a new one).
        ...(reconnect ? { reauthorize: reconnect.sealed } : {}),
        savedAccounts: accounts
          .filter((account) => account !== reconnect && !account.stale)
          .map((account) => account.sealed),
        allowSaving: true,
      });
      order.linkSession = { ...created, language };
      return created.linkToken;
    }
    return current.linkToken;
  }

  router.get('/', async (req, res) => {
    const current = orders.get(shoppersOrderId(req) ?? '');
    const shopper = shopperOf(req, current);
    const order = current?.state === 'open' && current.merchantUserId === shopper ? current : orders.open(shopper);
    // ?lang=es: the element and the bank's pages in Spanish (the demo's own page stays English). The order
    // keeps it, so the checkout a Pay sends back to (a reconnect) speaks it too.
    if (req.query.lang === 'es' || req.query.lang === 'en') order.language = req.query.lang;
    res.cookie(ORDER_COOKIE, order.orderId, { httpOnly: true, sameSite: 'lax', path: '/' });
    res.cookie(SHOPPER_COOKIE, SHOPPER_ID.exec(shopper)![1]!, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      maxAge: 365 * 24 * 3_600_000,
    });
    const linkToken = await linkTokenFor(order, order.language);
    // A returning shopper's first screen is the saved list (a reconnect's is not): the page reserves its height.
    const accounts = saved.list(order.merchantUserId);
    const offered = order.reconnect || accounts.some((account) => account.stale) ? 0 : accounts.length;
    sendHtml(res, 200, checkoutPage(order, linkToken, order.language, offered));
  });

  router.post('/pay', express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 }), async (req, res) => {
    if (crossSite(req)) {
      sendProblem(
        res,
        403,
        'Cross-site request refused',
        "Payments are accepted only from this shop's own checkout page.",
      );
      return;
    }
    const parsed = PaymentForm.safeParse(req.body ?? {});
    if (!parsed.success) {
      const errors = parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
      sendProblem(
        res,
        400,
        'Invalid payment form',
        `Invalid field(s): ${errors.map((e) => e.path).join(', ')}`,
        errors,
      );
      return;
    }
    const form = parsed.data;
    const order = orders.get(form.orderId);
    if (!order) {
      sendHtml(res, 404, notFoundPage());
      return;
    }
    if (form.orderId !== shoppersOrderId(req)) {
      sendProblem(res, 403, 'Not your order', 'This order belongs to another shopping session.', [
        { path: 'orderId', message: 'is not the order of this browser' },
      ]);
      return;
    }
    // Only an open order is charged; a second click or a resubmitted form just shows the outcome.
    if (order.state === 'open') {
      order.state = 'paying';
      // The proxy checks the reference was verified for this shopper, order and amount, and pays once.
      const result = await options.proxy.charge({
        linkRef: form.linkRef,
        merchantUserId: order.merchantUserId,
        merchantTransactionId: order.orderId,
        amount: decimalAmount(order.totalCents),
        currency: SHOP.currency,
        language: `${order.language}-US`,
        ...(req.ip ? { originatorIp: req.ip.replace(/^::ffff:/, '') } : {}),
      });
      if (result.ok) {
        // The receipt's account comes from the verified outcome on the server, not from the page.
        const account = await options.proxy.linkedAccount(form.linkRef);
        // The shopper ticked "save" (or reconnected it): keep it for the next purchase.
        if (account?.savedAccount) saved.save(order.merchantUserId, account.savedAccount);
        order.state = 'paid';
        order.payment = {
          transactionId: result.response.transactionId,
          transactionStatus: result.response.transactionStatus,
          accountLabel: account?.accountLabel,
          fiName: account?.fiName,
          fiAccountType: account?.fiAccountType,
          paidAt: Date.now(),
        };
      } else if (result.reconnect) {
        // The bank wants the shopper to sign in again: back to the checkout, which offers "Reconnect".
        order.state = 'open';
        order.reconnect = result.reconnect;
        saved.markStale(order.merchantUserId, result.reconnect);
        order.linkSession = undefined;
        res.redirect(303, '/');
        return;
      } else {
        order.state = 'declined';
        order.failure = { title: result.title, detail: result.detail };
      }
    }
    res.redirect(303, `/orders/${encodeURIComponent(order.orderId)}`);
  });

  // The sandbox's test control, for trying the "Reconnect" path by hand (the demo runs the sandbox).
  router.post('/sandbox/stale-accounts', (req, res) => {
    if (crossSite(req) || !options.markAccountsStale) {
      sendProblem(res, 403, 'Refused', "Only the demo's own page can use the sandbox control.");
      return;
    }
    options.markAccountsStale();
    res.redirect(303, '/');
  });

  router.get('/orders/:orderId', (req, res) => {
    const order = orders.get(req.params.orderId);
    // A receipt is the shopper's own: an order id alone (shared, guessed, in a log) shows nothing.
    if (!order || order.state === 'open' || order.orderId !== shoppersOrderId(req)) {
      sendHtml(res, 404, notFoundPage());
      return;
    }
    sendHtml(res, 200, resultPage(order));
  });

  return router;
}

/** Turns body-parser failures (oversized or malformed forms) into problem+json instead of a stack trace. */
export const checkoutErrorHandler: ErrorRequestHandler = (error, _req, res, next) => {
  if (res.headersSent) return next(error);
  const status = typeof error?.status === 'number' && error.status >= 400 && error.status < 500 ? error.status : 500;
  const title = status === 500 ? 'Internal error' : 'Bad request';
  const detail = status === 500 ? 'The demo shop hit an unexpected error.' : String(error?.message ?? 'Bad request');
  sendProblem(res, status, title, detail);
};
