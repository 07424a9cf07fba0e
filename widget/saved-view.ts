// The element's views for returning shoppers: the saved-account list (one radio per account, Remove
// with its confirmation, "Use another account"), the consent box beside a bank link that may be saved,
// and the account a reconnect is for. Templates only: saved-accounts.ts holds the state; the words are
// the proxy's, in the link session's language.
import { html, nothing, type TemplateResult } from 'lit';
import type { OfferedAccount, SavedAccounts, SavedStatus, Words } from './saved-accounts.ts';

/** An account's line, shown with the masked number and spoken with the proxy's words for it. */
const line = (shown: string, spoken: string) => html`<span aria-hidden="true">${shown}</span><span class="sr">${spoken}</span>`;

/** The unchecked consent box and the debit authorization it refers to (a `<label>` around box and words). */
export const consentBox = (saving: Words | undefined, disabled: boolean) =>
  saving
    ? html`<div class="consent" lang=${saving.lang}><label><input id="consent" type="checkbox" aria-describedby="ct" ?disabled=${disabled}> ${saving.checkbox}</label><p id="ct">${saving.text}</p></div>`
    : nothing;

/** "Reconnect Sandbox Federal Bank ••••4321" (the masked number alone after the bank's name), spoken in words. */
export const reconnectTitle = (words: Words, { fiName, displayLabel, spokenLabel }: OfferedAccount) =>
  html`<span lang=${words.lang}>${words.reconnect}</span> ${fiName} ${line(displayLabel.split(' ').pop()!, spokenLabel)}`;

/**
 * The list as a radio group (arrows move the choice, which uses the account at once; a click, not a
 * change, so the chosen radio clicked again after a failure tries again), then "Use another account".
 */
export function savedList(status: SavedStatus, saved: SavedAccounts, useAnother: () => void, disabled: boolean): TemplateResult {
  const { words: w, saving } = saved.offer!;
  const button = (label: string, click: () => void, extra?: string) =>
    html`<button part="secondary-button" aria-label=${extra ?? nothing} ?disabled=${disabled} @click=${click}>${label}</button>`;
  const row = ({ id, fiName, displayLabel, spokenLabel }: OfferedAccount) => html`<div class="row">
    <label><input type="radio" name="saved" .checked=${id === status.chosen} ?disabled=${disabled} @click=${() => saved.choose(id)}><span>${fiName} · ${line(displayLabel, spokenLabel)}</span></label>
    ${status.removing === id
      ? html`<p id="rm">${w.removeConfirm}</p>${button(w.remove, () => saved.remove(id))}${button(w.keep, () => saved.askRemove())}`
      : button(w.remove, () => saved.askRemove(id), `${w.remove} ${fiName} ${spokenLabel}`)}
  </div>`;
  return html`<div role="radiogroup" aria-label=${w.title} class="list" lang=${w.lang}>${status.accounts.map(row)}</div>${consentBox(saving, disabled)}<button part="button" lang=${w.lang} ?disabled=${disabled} @click=${useAnother}>${w.useAnother}</button>`;
}
