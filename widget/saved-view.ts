// The element's views for returning shoppers: the saved-account list (one radio per account, Remove
// beside it, confirmed in the element — the account named, the words the proxy's or the page's `strings`
// — and "Use another account"), the consent box beside a bank link that may be saved (never beside the
// list, where it would read as the chosen account's; the authorization's rest folds away so the action
// stays near on a phone), and an account's line shown and spoken. Templates only: saved-accounts.ts holds
// the state; the words are the proxy's, in the link session's language.
import { html, nothing, type TemplateResult } from 'lit';
import type { OfferedAccount, SavedAccounts, SavedStatus, Words } from './saved-accounts.ts';

/** An account's line, shown with the masked number and spoken with the proxy's words for it. */
export const line = (shown: string, spoken: string) => html`<span aria-hidden="true">${shown}</span><span class="sr">${spoken}</span>`;

/** `words` with `{account}` replaced by the account's bank and line. */
export const naming = (words: string, { fiName, displayLabel, spokenLabel }: OfferedAccount) => {
  const [lead, tail] = words.split('{account}');
  return html`${lead}${fiName} ${line(displayLabel, spokenLabel)}${tail}`;
};

/**
 * The consent box and the debit authorization it refers to (a `<label>` around box and words): unchecked
 * until the shopper ticks it, then `checked` on every screen that starts a bank step again.
 */
export const consentBox = (saving: Words | undefined, disabled: boolean, checked: boolean) =>
  saving
    ? html`<div part="consent" class="consent" lang=${saving.lang}><label><input id="consent" type="checkbox" aria-describedby="ct cd" ?disabled=${disabled} .checked=${checked}> ${saving.checkbox}</label><p id="ct">${saving.text}</p><details><summary>${saving.more}</summary><p id="cd">${saving.details}</p></details></div>`
    : nothing;

/**
 * The list as a radio group (arrows move the choice, which uses the account at once; a click, not a
 * change, so the chosen radio clicked again after a failure tries again), then "Use another account".
 * Remove asks first, in the account's row: the question names the account, Keep is focused.
 */
export function savedList(status: SavedStatus, saved: SavedAccounts, useAnother: () => void, disabled: boolean, w: Words): TemplateResult {
  return html`<div role="radiogroup" aria-label=${w.title} class="list">${status.accounts.map((account) => html`<div class="row">
    <label><input type="radio" name="saved" .checked=${account.id === status.chosen} ?disabled=${disabled} @click=${() => saved.choose(account.id)}><span><span class="fi">${account.fiName}</span> ${line(account.displayLabel, account.spokenLabel)}</span></label>
    ${status.asking === account.id
      ? html`<div class="actions ask" role="group" aria-labelledby="q"><p id="q">${naming(w.removeConfirm, account)}</p><button part="secondary-button" @click=${() => saved.remove(account.id)}>${w.remove}</button><button part="secondary-button" id="k" @click=${() => saved.ask()}>${w.keep}</button></div>`
      : html`<button part="secondary-button" aria-label="${w.remove} ${account.fiName} ${account.spokenLabel}" ?disabled=${disabled} @click=${() => saved.ask(account.id)}>${w.remove}</button>`}
  </div>`)}</div><button part="button" ?disabled=${disabled} @click=${useAnother}>${w.useAnother}</button>`;
}
