// The demo merchant's HTML: the checkout page and the order result page. No inline scripts or styles
// (the pages are served under a strict Content-Security-Policy); behaviour lives in /assets/checkout.js.
import { html, type SafeHtml } from './html.ts';
import { SHOP, formatMoney, type Order } from './orders.ts';

const LOCK_ICON = html`<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="currentColor" d="M12 2a5 5 0 0 0-5 5v3H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-8a2 2 0 0 0-2-2h-1V7a5 5 0 0 0-5-5Zm-3 5a3 3 0 0 1 6 0v3H9V7Z"/></svg>`;
const CHECK_ICON = html`<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="currentColor" d="M9.5 16.6 5.4 12.5 4 13.9l5.5 5.5L20 8.9l-1.4-1.4-9.1 9.1Z"/></svg>`;
const CROSS_ICON = html`<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="currentColor" d="M18.3 5.7 12 12l6.3 6.3-1.4 1.4L12 14.8l-6.3 6.3-1.4-1.4L10.6 12 4.3 5.7l1.4-1.4L12 10.6l6.3-6.3 1.4 1.4Z"/></svg>`;

function document(title: string, bodyClass: string, body: SafeHtml, scripts: boolean): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${SHOP.name}</title>
<link rel="icon" href="/assets/images/logo.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/checkout.css">
${
  scripts
    ? html`<script type="module" src="/assets/checkout.js"></script>
<script type="module" src="/assets/obv-link-account.js"></script>`
    : ''
}
</head>
<body class="${bodyClass}">
${body}
</body>
</html>
`;
}

function masthead(): SafeHtml {
  return html`<header class="masthead">
  <a class="brand" href="/"><img src="/assets/images/logo.svg" alt="" width="32" height="32"><span>${SHOP.name}</span></a>
  <span class="secure">${LOCK_ICON}Secure checkout</span>
</header>`;
}

function orderSummary(order: Order): SafeHtml {
  const items = order.items.map(
    (item) => html`<li class="line-item">
      <span class="thumb"><img src="${item.image}" alt="" width="56" height="56"><span class="qty" aria-label="Quantity ${item.quantity}">${item.quantity}</span></span>
      <span class="item-text"><span class="item-name">${item.name}</span><span class="item-variant">${item.variant}</span></span>
      <span class="item-price">${formatMoney(item.quantity * item.unitPriceCents)}</span>
    </li>`,
  );
  return html`<section class="summary" aria-labelledby="summary-title">
  <h2 id="summary-title">Order summary</h2>
  <ul class="line-items">${items}</ul>
  <dl class="totals">
    <div><dt>Subtotal</dt><dd>${formatMoney(order.subtotalCents)}</dd></div>
    <div><dt>Shipping</dt><dd>Free</dd></div>
    <div><dt>Estimated tax</dt><dd>${formatMoney(order.taxCents)}</dd></div>
    <div class="grand-total"><dt>Total</dt><dd><span class="currency">${SHOP.currency}</span> <span data-total>${formatMoney(order.totalCents)}</span></dd></div>
  </dl>
  <p class="order-ref">Order <span class="mono">${order.orderId}</span></p>
</section>`;
}

function eventsPanel(): SafeHtml {
  return html`<aside class="events" aria-labelledby="events-title">
  <header class="events-header">
    <div>
      <h2 id="events-title">Element events</h2>
      <p>What <code>&lt;obv-link-account&gt;</code> fires, as it happens.</p>
    </div>
    <button type="button" class="events-clear" id="events-clear">Clear</button>
  </header>
  <!-- Not a live region: a screen reader would read every event's JSON aloud. The element's own status says what happened. -->
  <ol class="event-log" id="event-log" aria-labelledby="events-title"></ol>
  <p class="events-empty" id="events-empty">No events yet. Click <strong>Link your bank account</strong> to start.</p>
  <footer class="sandbox-help">
    <h3>Sandbox bank logins</h3>
    <dl>
      <div><dt><code>user_good</code> / <code>pass_good</code></dt><dd>links a checking account</dd></div>
      <div><dt><code>user_savings</code> / <code>pass_good</code></dt><dd>links a savings account</dd></div>
      <div><dt><code>user_bad</code></dt><dd>bank cannot verify the account</dd></div>
      <div><dt><code>user_locked</code></dt><dd>account locked</dd></div>
      <div><dt>Cancel</dt><dd>consumer cancels at the bank</dd></div>
    </dl>
    <form method="post" action="/sandbox/stale-accounts" class="sandbox-control">
      <button type="submit" class="events-clear">Make linked accounts stale</button>
      <p>The next payment with a saved account then asks the shopper to reconnect it.</p>
    </form>
  </footer>
</aside>`;
}

/** The languages the element speaks, for the demo's switch (the rest of the demo page stays English). */
export type DemoLanguage = 'en' | 'es';

/** Links that reload the checkout with the element (and the bank's pages) in the other language. */
function languageSwitch(language: DemoLanguage): SafeHtml {
  const link = (lang: DemoLanguage, name: string) =>
    html`<a href="/?lang=${lang}" lang="${lang}" hreflang="${lang}"${lang === language ? html` aria-current="true"` : ''}>${name}</a>`;
  return html`<nav class="language-switch" aria-label="Language of the bank linking">${link('en', 'English')}${link('es', 'Español')}</nav>`;
}

/**
 * The checkout page: payment form with `<obv-link-account>` for the server's link session, order summary and
 * the events panel. `savedAccounts`: how many the link session offers (not reconnecting), so the page
 * reserves the list's height rather than the first-time screen's (checkout.css, checkout.ts).
 */
export function checkoutPage(
  order: Order,
  linkToken: string,
  language: DemoLanguage = 'en',
  savedAccounts = 0,
): string {
  const total = formatMoney(order.totalCents);
  const body = html`<div class="layout">
<div class="shop">
${masthead()}
<main class="checkout">
  ${orderSummary(order)}
  <section class="payment" aria-labelledby="checkout-title">
    <h1 id="checkout-title">Checkout</h1>
    <form id="payment-form" class="payment-form" method="post" action="/pay">
      <input type="hidden" name="orderId" value="${order.orderId}">
      <fieldset class="card">
        <legend>Contact</legend>
        <p class="contact"><span class="avatar" aria-hidden="true">AL</span><span><span class="contact-name">${SHOP.shopper.firstName} ${SHOP.shopper.lastName}</span><span class="contact-email">${SHOP.shopper.email}</span></span></p>
      </fieldset>
      <fieldset class="card">
        <legend>Payment</legend>
        ${languageSwitch(language)}
        <obv-link-account
          id="obv"${savedAccounts > 0 ? html` class="returning-${Math.min(savedAccounts, 3)}"` : ''}
          name="linkRef"
          required
          proxy-url="/obv"
          link-token="${linkToken}"
          language="${language}"></obv-link-account>
      </fieldset>
      <button type="submit" class="pay-button" id="pay-button" aria-describedby="pay-hint" disabled>${LOCK_ICON}<span>Pay ${total}</span></button>
      <p class="pay-hint" id="pay-hint" lang="${language}">${language === 'es' ? 'Vincula una cuenta bancaria para continuar.' : 'Link a bank account to continue.'}</p>
    </form>
  </section>
</main>
<footer class="site-footer">Sandbox demo of obv-link · no real money moves · ${SHOP.name} is a fictional shop</footer>
</div>
${eventsPanel()}
</div>`;
  return document('Checkout', 'page-checkout', body, true).value;
}

/** The receipt's words, in the checkout's language (the order keeps it): the shopper reads one language from the element to the receipt. */
const RECEIPT = {
  en: {
    approved: 'Payment approved',
    notCompleted: 'Payment not completed',
    order: 'Order',
    transaction: 'Transaction ID',
    status: 'Status',
    paidFrom: 'Paid from',
    amount: 'Amount',
    continue: 'Continue shopping',
    back: 'Back to checkout',
    declined: 'Declined',
    failed: 'The payment could not be completed.',
    confirmed: 'Order confirmed',
    thanks: (name: string, email: string) =>
      html`Thanks, ${name}! Your order is confirmed and a receipt is on its way to ${email}.`,
  },
  es: {
    approved: 'Pago aprobado',
    notCompleted: 'Pago no completado',
    order: 'Pedido',
    transaction: 'ID de transacción',
    status: 'Estado',
    paidFrom: 'Pagado desde',
    amount: 'Importe',
    continue: 'Seguir comprando',
    back: 'Volver al pago',
    declined: 'Rechazado',
    failed: 'No se pudo completar el pago.',
    confirmed: 'Pedido confirmado',
    thanks: (name: string, email: string) =>
      html`¡Gracias, ${name}! Tu pedido está confirmado y enviamos el recibo a ${email}.`,
  },
};

const ACCOUNT_TYPES: Record<string, string> = { CHECKING: 'Corriente', SAVINGS: 'Ahorros' };

/** The account's line in the receipt's language: in Spanish, "Corriente ••••4321" (as the element showed it). */
function accountLine(
  { accountLabel = '', fiAccountType = '' }: { accountLabel?: string | undefined; fiAccountType?: string | undefined },
  language: DemoLanguage,
): string {
  const type = ACCOUNT_TYPES[fiAccountType.toUpperCase()];
  return language === 'es' && type ? accountLabel.replace(/^(checking|savings)\b/i, type) : accountLabel;
}

/** The page after the Pay button: the interactive transaction's outcome, in the checkout's language. */
export function resultPage(order: Order): string {
  const words = RECEIPT[order.language];
  const paid = order.state === 'paid' && order.payment;
  const account = [order.payment && accountLine(order.payment, order.language), order.payment?.fiName]
    .filter(Boolean)
    .join(' · ');
  const body = html`<div class="shop result-shop">
${masthead()}
<main class="result">
  <section class="result-card ${paid ? 'is-approved' : 'is-declined'}" aria-labelledby="result-title" lang="${order.language}">
    <span class="result-mark">${paid ? CHECK_ICON : CROSS_ICON}</span>
    <h1 id="result-title">${paid ? words.approved : words.notCompleted}</h1>
    <p class="result-lead">${
      paid ? words.thanks(SHOP.shopper.firstName, SHOP.shopper.email) : html`${order.failure?.detail ?? words.failed}`
    }</p>
    <dl class="receipt">
      <div><dt>${words.order}</dt><dd class="mono">${order.orderId}</dd></div>
      ${
        order.payment
          ? html`<div><dt>${words.transaction}</dt><dd class="mono" id="transaction-id">${order.payment.transactionId}</dd></div>
      <div><dt>${words.status}</dt><dd><span class="status status-${order.payment.transactionStatus.toLowerCase()}" id="transaction-status">${order.payment.transactionStatus}</span></dd></div>`
          : html`<div><dt>${words.status}</dt><dd><span class="status status-declined" id="transaction-status">${order.failure?.title ?? words.declined}</span></dd></div>`
      }
      ${account ? html`<div><dt>${words.paidFrom}</dt><dd>${account}</dd></div>` : ''}
      <div><dt>${words.amount}</dt><dd>${formatMoney(order.totalCents)}</dd></div>
    </dl>
    <a class="button-secondary" href="/">${paid ? words.continue : words.back}</a>
  </section>
  ${orderSummary(order)}
</main>
</div>`;
  return document(paid ? words.confirmed : words.notCompleted, 'page-result', body, false).value;
}

/** A plain page for an unknown order (a stale link, or an order evicted from memory). */
export function notFoundPage(): string {
  const body = html`<div class="shop result-shop">
${masthead()}
<main class="result"><section class="result-card is-declined"><h1>Order not found</h1>
<p class="result-lead">This order does not exist any more. The demo keeps orders in memory only.</p>
<a class="button-secondary" href="/">Back to checkout</a></section></main>
</div>`;
  return document('Order not found', 'page-result', body, false).value;
}
