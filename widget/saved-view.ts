// The element's views for returning shoppers: the saved-account list (one radio per account, Remove
// after the browser's own confirmation dialog — native, accessible and free of bytes, which the element's
// budget counts — and "Use another account"), the consent box beside a bank link that may be saved (never
// beside the list, where it would read as the chosen account's), and an account's line shown and spoken.
// Templates only: saved-accounts.ts holds the state; the words are the proxy's, in the link session's
// language.
import { html, nothing, type TemplateResult } from 'lit';
import type { SavedAccounts, SavedStatus, Words } from './saved-accounts.ts';

/** An account's line, shown with the masked number and spoken with the proxy's words for it. */
export const line = (shown: string, spoken: string) => html`<span aria-hidden="true">${shown}</span><span class="sr">${spoken}</span>`;

/**
 * The consent box and the debit authorization it refers to (a `<label>` around box and words): unchecked
 * until the shopper ticks it, then `checked` on every screen that starts a bank step again.
 */
export const consentBox = (saving: Words | undefined, disabled: boolean, checked: boolean) =>
  saving
    ? html`<div class="consent" lang=${saving.lang}><label><input id="consent" type="checkbox" aria-describedby="ct" ?disabled=${disabled} .checked=${checked}> ${saving.checkbox}</label><p id="ct">${saving.text}</p></div>`
    : nothing;

/**
 * The list as a radio group (arrows move the choice, which uses the account at once; a click, not a
 * change, so the chosen radio clicked again after a failure tries again), then "Use another account".
 */
export function savedList(status: SavedStatus, saved: SavedAccounts, useAnother: () => void, disabled: boolean): TemplateResult {
  const w = saved.offer!.words;
  return html`<div role="radiogroup" aria-label=${w.title} class="list">${status.accounts.map(({ id, fiName, displayLabel, spokenLabel }) => html`<div class="row">
    <label><input type="radio" name="saved" .checked=${id === status.chosen} ?disabled=${disabled} @click=${() => saved.choose(id)}><span>${fiName} · ${line(displayLabel, spokenLabel)}</span></label>
    <button part="secondary-button" aria-label="${w.remove} ${fiName} ${spokenLabel}" ?disabled=${disabled} @click=${() => confirm(w.removeConfirm) && saved.remove(id)}>${w.remove}</button>
  </div>`)}</div><button part="button" ?disabled=${disabled} @click=${useAnother}>${w.useAnother}</button>`;
}
