// The sandbox bank's pages. Plain HTML, no script; everything echoed is escaped. Every page is served at
// `…/consumer/{verificationId}`, so its links are relative: the app works mounted under any path.
import { BANK_CSS_PATH } from './consumer-styles.ts';
import { bankPageText, type BankPageText } from './consumer-text.ts';
import { SANDBOX_BANK_NAME } from './sandbox-data.ts';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and double- or single-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

/** "$75.12" in English and in Spanish (es-US: the service is for US consumers): money as the shopper reads it (the code as is if Intl does not know it). */
export function formatMoney(amount: string, currency: string, lang: string): string {
  try {
    return new Intl.NumberFormat(`${lang}-US`, { style: 'currency', currency }).format(Number(amount));
  } catch {
    return `${amount} ${currency}`;
  }
}

function layout(text: BankPageText, title: string, content: string): string {
  return `<!doctype html>
<html lang="${text.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} – ${SANDBOX_BANK_NAME}</title>
<link rel="stylesheet" href="..${BANK_CSS_PATH}">
</head>
<body>
<header class="bank-bar"><span class="bank-logo" aria-hidden="true">SFB</span><span class="bank-name">${SANDBOX_BANK_NAME}</span></header>
<main>
<div class="card">
${content}
</div>
</main>
<footer>${text.footer}</footer>
</body>
</html>
`;
}

export interface SignInPageModel {
  verificationId: string;
  consumerToken: string;
  /** The merchant's name on file, if the sandbox has one. */
  merchantName?: string | undefined;
  amount: string;
  currency: string;
  /** The verification's `transaction.language`. */
  language?: string;
  username?: string;
  /** Set after a wrong password: the page shows the bank's "incorrect" message. */
  incorrect?: boolean;
}

/**
 * The sign-in form: labelled fields, Sign in and Cancel, and after a bad attempt the error (role="alert"),
 * which takes the focus (autofocus: the page runs no script) so that keyboard and screen reader users
 * start from it instead of the top of the page.
 */
export function signInPage(model: SignInPageModel): string {
  const text = bankPageText(model.language);
  const invalid = model.incorrect ? ' aria-invalid="true" aria-describedby="form-error"' : '';
  const error = model.incorrect
    ? `<p class="error" role="alert" id="form-error" tabindex="-1" autofocus>${text.incorrectCredentials}</p>\n`
    : '';
  return layout(
    text,
    text.signInTitle,
    `<h1>${text.signInHeading(SANDBOX_BANK_NAME)}</h1>
<p class="lead">${text.signInLead(escapeHtml(formatMoney(model.amount, model.currency, text.lang)), model.merchantName ? escapeHtml(model.merchantName) : undefined)}</p>
<form method="post" action="${encodeURIComponent(model.verificationId)}">
<input type="hidden" name="t" value="${escapeHtml(model.consumerToken)}">
${error}<div class="field">
<label for="username">${text.username}</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${escapeHtml(model.username ?? '')}"${invalid}>
</div>
<div class="field">
<label for="password">${text.password}</label>
<input type="password" id="password" name="password" autocomplete="current-password" required${invalid}>
</div>
<div class="actions">
<button type="submit" class="primary" name="action" value="signin">${text.signIn}</button>
<button type="submit" class="secondary" name="action" value="cancel" formnovalidate>${text.cancel}</button>
</div>
</form>
<p class="sandbox-note">${text.sandboxNote}</p>`,
  );
}

/** A consumerUrl used after completion or after its lifetime. */
export function expiredPage(language?: string): string {
  const text = bankPageText(language);
  return layout(text, text.expiredTitle, `<h1>${text.expiredHeading}</h1>\n<p class="lead">${text.expiredLead}</p>`);
}

/** A consumerUrl the sandbox never issued (or with a wrong token): no verification, so no language either. */
export function unknownLinkPage(): string {
  const text = bankPageText(undefined);
  return layout(text, text.unknownTitle, `<h1>${text.unknownHeading}</h1>\n<p class="lead">${text.unknownLead}</p>`);
}

/** After an outcome, when the request named no returnURL. */
export function finishedPage(language?: string): string {
  const text = bankPageText(language);
  return layout(text, text.doneTitle, `<h1>${text.doneHeading}</h1>\n<p class="lead">${text.doneLead}</p>`);
}
