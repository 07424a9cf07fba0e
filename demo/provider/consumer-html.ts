// The sandbox bank's pages. Plain HTML, no script; everything echoed is escaped. Every page is served at
// `…/consumer/{verificationId}`, so its links are relative: the app works mounted under any path.
import { BANK_CSS_PATH } from './consumer-styles.ts';
import { SANDBOX_BANK_NAME } from './sandbox-data.ts';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and double- or single-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

function layout(title: string, content: string): string {
  return `<!doctype html>
<html lang="en">
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
<footer>Sandbox environment – no real bank is contacted.</footer>
</body>
</html>
`;
}

export interface SignInPageModel {
  verificationId: string;
  consumerToken: string;
  amount: string;
  currency: string;
  username?: string;
  error?: string;
}

/** The sign-in form: labelled fields, Sign in and Cancel, and the error (role="alert") after a bad attempt. */
export function signInPage(model: SignInPageModel): string {
  const invalid = model.error ? ' aria-invalid="true" aria-describedby="form-error"' : '';
  const error = model.error ? `<p class="error" role="alert" id="form-error">${escapeHtml(model.error)}</p>\n` : '';
  return layout(
    'Sign in',
    `<h1>Sign in to ${SANDBOX_BANK_NAME}</h1>
<p class="lead">A merchant asks to verify your bank account for a payment of ${escapeHtml(model.amount)} ${escapeHtml(model.currency)}. Sign in to link your account.</p>
<form method="post" action="${encodeURIComponent(model.verificationId)}">
<input type="hidden" name="t" value="${escapeHtml(model.consumerToken)}">
${error}<div class="field">
<label for="username">Username</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${escapeHtml(model.username ?? '')}"${invalid}>
</div>
<div class="field">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required${invalid}>
</div>
<div class="actions">
<button type="submit" class="primary" name="action" value="signin">Sign in</button>
<button type="submit" class="secondary" name="action" value="cancel" formnovalidate>Cancel</button>
</div>
</form>
<p class="sandbox-note">Sandbox test consumers: <code>user_good</code> / <code>pass_good</code> (checking), <code>user_savings</code> / <code>pass_good</code> (savings), <code>user_bad</code> and <code>user_locked</code> (failures).</p>`,
  );
}

/** A consumerUrl used after completion or after its lifetime. */
export function expiredPage(): string {
  return layout(
    'Link expired',
    `<h1>This link has expired</h1>
<p class="lead">This verification link was already used or is too old. Return to the merchant and start the verification again.</p>`,
  );
}

/** A consumerUrl the sandbox never issued (or with a wrong token). */
export function unknownLinkPage(): string {
  return layout(
    'Link not valid',
    `<h1>This link is not valid</h1>
<p class="lead">Return to the merchant and start the verification again.</p>`,
  );
}

/** After an outcome, when the request named no returnURL. */
export function finishedPage(): string {
  return layout('Done', `<h1>You are done</h1>\n<p class="lead">You can close this window and return to the merchant.</p>`);
}
