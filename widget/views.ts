// The element's views, templates only: the card of each state of the flow (link-flow.ts holds the state,
// the element renders this and moves focus); for returning shoppers, the saved-account list (one radio per
// account, Remove beside it, confirmed in the element — the account named, the words the proxy's or the
// page's `strings` — and "Use another account"), the consent box beside a bank link that may be saved
// (never beside the list, where it would read as the chosen account's; the authorization's rest folds away
// so the action stays near on a phone), and an account's line shown and spoken (saved-accounts.ts holds
// their state; their words are the proxy's, in the link session's language).
import { html, nothing, type TemplateResult } from 'lit';
import type { FlowStatus, LinkFlow } from './link-flow.ts';
import type { OfferedAccount, SavedAccounts, SavedStatus, Words } from './saved-accounts.ts';
import type { ObvStrings } from './strings.ts';

/**
 * What the card's view reads from the element: its flow, its words and language, whether it is disabled,
 * the live region's state, and the handlers of its buttons (Lit calls them with the element as `this`).
 * `_` members are the element's internals (the build shortens them).
 */
export interface CardHost {
  readonly _flow: LinkFlow;
  readonly _s: ObvStrings;
  /** The language of the element's own words, marked on the card. */
  readonly _lang: string;
  /** Disabled, by its attribute or a disabled fieldset. */
  readonly _off: boolean;
  /** The status has focus and reads itself: the live region stays quiet meanwhile. */
  readonly _quiet: boolean;
  /** The live region is emptied for a moment, so that an outcome is announced again. */
  readonly _hush: boolean;
  start(): void;
  cancel(): void;
  _retry(): void;
  _speak(): void;
}

// Icon outlines on a 24×24 grid, stroked by the stylesheet.
const BANK_ICON = 'M3 10h18M5 10v7m5-7v7m4-7v7m5-7v7M3 20h18M12 3l9 5H3z';
const CHECK_ICON = 'M5 12.5l4.5 4.5L19 7.5';
const ALERT_ICON = 'M12 7.5v6m0 3.5v.01M12 2.5a9.5 9.5 0 1 0 0 19a9.5 9.5 0 1 0 0-19';

/**
 * The card: icon, status (the live region: the title, a heading of the page's outline; hint, account,
 * error) and the actions of the flow's state.
 */
export function card(host: CardHost): TemplateResult {
  const s = host._s;
  const flow = host._flow;
  const status = flow.status;
  const state = status.kind;
  const offer = flow.saved.offer;
  const error = state === 'error' ? status.error : undefined;
  const failure = state === 'failure' ? status : undefined;
  // The reconnect screen, unless the shopper chose "Use another account" there.
  const reconnect = state === 'idle' && !status.another && offer?.reconnect;
  const removed = state === 'saved' && status.removed;
  const blocked = (status as { blocked?: boolean }).blocked;
  // The screen, named as the words are (`${screen}Title`, `${screen}Hint`). A lost watch is no failure:
  // it picks up again by itself, and nothing is lost.
  const screen = error
    ? error.watch
      ? 'lost'
      : error.kind === 'configuration' || error.service
        ? 'configuration'
        : 'network'
    : state === 'waiting'
      ? status.closed
        ? 'closed'
        : blocked
          ? 'blocked'
          : state
      : state;
  const words = s as unknown as Record<string, string | undefined>;
  // Said in red, in the error part: only shopper-facing words (what went wrong for the developer is in
  // `obv-error` and the console).
  const failed = /^(failure|expired|configuration|network)$/.test(screen);
  const text = failure
    ? failure.message
    : state === 'idle'
      ? (status.cancelled && s.cancelled) || (reconnect ? offer.words.reconnectHint : s.idleHint)
      : removed
        ? naming(s.removed ?? offer!.words.removed, removed)
        : words[`${screen}Hint`];
  // "Check now" that could not reach the proxy either says so, for the shopper who asked; a saved account's
  // choice that did not go through says why, in the proxy's words, under the list that stays.
  const problem = failed
    ? text
    : error?.checked
      ? error.service
        ? s.configurationHint
        : s.networkHint
      : state === 'saved' && status.problem
        ? offer!.words[status.problem]
        : '';
  // A spinner only while something is under way: a blocked pop-up or a closed tab waits for the shopper, not the bank.
  const icon = failed
    ? ALERT_ICON
    : state === 'success'
      ? CHECK_ICON
      : /^(starting|waiting|lost)$/.test(screen) && !blocked
        ? ''
        : BANK_ICON;
  const lang = (failure?.lang || nothing) as string;
  // The build strips the indentation (vite.config.ts): whitespace with a line break is not content.
  return html`
    <div part="base" class="card ${failed ? 'danger' : state}" lang=${host._lang}>
      <div part="icon" class="icon" aria-hidden="true">
        ${icon ? html`<svg viewBox="0 0 24 24"><path d=${icon} /></svg>` : html`<span class="spinner"></span>`}
      </div>
      <div class="body">
        <div part="status" id="s" role="status" aria-live=${host._quiet ? 'off' : 'polite'} tabindex=${host._quiet ? -1 : nothing} @blur=${host._speak}>
          ${
            host._hush
              ? nothing
              : html`
                <h2 class="title">
                  ${
                    reconnect
                      ? line(reconnect.displayLabel, reconnect.spokenLabel)
                      : state === 'saved'
                        ? offer?.words.title
                        : (words[`${screen}Title`] ?? s.starting)
                  }
                </h2>
                ${text && !failed ? html`<p lang=${lang}>${text}</p>` : nothing}
                ${
                  state === 'success'
                    ? html`<p part="account" class="account"><span class="fi">${status.account.fiName}</span>${accountLine(status.label)}</p>${status.note ? html`<p>${status.note}</p>` : nothing}`
                    : nothing
                }
                ${problem ? html`<p part="error" class="error" lang=${lang}>${problem}</p>` : nothing}
              `
          }
        </div>
      </div>
      ${error?.attribute ? nothing : html`<div class="actions">${actions(host, s, status, screen)}</div>`}
      <iframe hidden sandbox="allow-same-origin allow-popups allow-popups-to-escape-sandbox"></iframe>
    </div>
  `;
}

function actions(host: CardHost, s: ObvStrings, status: FlowStatus, screen: string): TemplateResult {
  const flow = host._flow;
  const saved = flow.saved;
  const offer = saved.offer;
  const words = offer?.words;
  const cancel = button(host, s.cancel, host.cancel, 1);
  switch (status.kind) {
    case 'idle': {
      // The reconnect screen is no dead end: the other saved accounts, and "Use another account" (a plain link).
      // After "Use another account": back to the saved accounts, or to the reconnect screen.
      const reconnect = offer?.reconnect && !status.another;
      // The consent box only where the shopper confirms a bank step, beside its button, as they left it:
      // never beside a failure (it would read as the failed account's), a saved list, or Reconnect (the
      // account is saved already); a retry carries the consent given at the last start.
      return html`${reconnect ? nothing : consentBox(offer?.saving, host._off, flow.consent)}${button(host, reconnect ? words!.reconnect : html`<slot name="label">${s.linkAccount}</slot>`, host.start)}${
        reconnect
          ? html`${offer.accounts[0] ? button(host, words!.useSaved, saved.list, 1) : nothing}${button(host, words!.useAnother, flow.another, 1)}`
          : status.another
            ? button(host, saved.status() ? words!.useSaved : words!.reconnect, host.cancel, 1)
            : nothing
      }`;
    }
    case 'saved':
      // With saving allowed, "Use another account" first shows the consent box beside the bank button.
      return savedList(status, saved, offer?.saving ? flow.another : host.start, host._off, {
        ...words!,
        removeConfirm: s.removeConfirm ?? words!.removeConfirm,
        tryAgain: s.tryAgain,
      });
    case 'starting':
      return cancel;
    case 'waiting':
      return html`${
        status.tab
          ? button(host, s.showTab, flow.showTab)
          : html`<a part="link" class="primary" href=${status.session.consumerUrl} target="_blank" rel="noopener" @click=${flow.linkOpened}>${s.openBank}</a>`
      }${cancel}`;
    case 'success':
      return button(host, s.change, host.start, 2);
    default: {
      const code = status.kind === 'failure' ? status.code : '';
      const lost = screen === 'lost';
      const label = /^ACCOUNT_(LOCKED|NOT_VERIFIED)$/.test(code) ? s.otherAccount : lost ? s.checkNow : s.tryAgain;
      // After a failed "Change", this takes the consumer back to the account linked before, named (its
      // line shown with bullets, read in words: the name comes from the content, so it matches what is shown).
      // One span around it all: each piece would be a flex item of its own, and the space after "Keep" lost.
      // Offline while the bank step may still finish: Cancel stops waiting for it.
      const before = flow.linkedBefore();
      const [lead, tail] = (s.keep ?? '{account}').split('{account}');
      return html`${button(host, label, host._retry)}${
        before
          ? button(host, html`<span>${lead}${accountLine(before.label)}${tail}</span>`, host.cancel, 1)
          : lost
            ? cancel
            : nothing
      }`;
    }
  }
}

/**
 * One of the element's buttons: the main one (`part="button"`, filled with the accent), a secondary one
 * (`kind` 1), or the main one unfilled (`kind` 2: "Change", where one more Enter would drop the account).
 */
function button(host: CardHost, label: unknown, onClick: () => void, kind = 0): TemplateResult {
  // Not described by the status: the live region says it once; a description would say it again with the button.
  return html`<button part=${kind === 1 ? 'secondary-button' : 'button'} class=${kind ? '' : 'primary'} ?disabled=${host._off} @click=${onClick}>${label}</button>`;
}

/** A linked account's line: "••••4321" would be read "bullet bullet bullet bullet 4321", the proxy's spoken form replaces it. */
const accountLine = ([shown, spoken]: [string, string]) => line(shown, spoken || shown);

/** An account's line, shown with the masked number and spoken with the proxy's words for it. */
export const line = (shown: string, spoken: string) =>
  html`<span aria-hidden="true">${shown}</span><span class="sr">${spoken}</span>`;

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
 * change, so the chosen radio clicked again after a failure tries again), then "Try again" when the last
 * choice did not go through, and "Use another account". Remove asks first, in the account's row: the
 * question names the account, Keep is focused.
 */
export function savedList(
  status: SavedStatus,
  saved: SavedAccounts,
  useAnother: () => void,
  disabled: boolean,
  w: Words & { tryAgain: string },
): TemplateResult {
  return html`<div role="radiogroup" aria-label=${w.title} class="list">${status.accounts.map(
    (account) => html`<div class="row">
    <label><input type="radio" name="saved" .checked=${account.id === status.chosen} ?disabled=${disabled} @click=${() => saved.choose(account.id)}><span><span class="fi">${account.fiName}</span> ${line(account.displayLabel, account.spokenLabel)}</span></label>
    ${
      status.asking === account.id
        ? html`<div class="actions ask" role="group" aria-labelledby="q"><p id="q">${naming(w.removeConfirm, account)}</p><button part="secondary-button" class="primary" @click=${() => saved.remove(account.id)}>${w.remove}</button><button part="secondary-button" id="k" @click=${() => saved.ask()}>${w.keep}</button></div>`
        : html`<button part="secondary-button" aria-label="${w.remove} ${account.fiName} ${account.spokenLabel}" ?disabled=${disabled} @click=${() => saved.ask(account.id)}>${w.remove}</button>`
    }
  </div>`,
  )}</div>${
    status.problem
      ? html`<button part="button" class="primary" ?disabled=${disabled} @click=${() => saved.retry()}>${w.tryAgain}</button>`
      : nothing
  }<button part="button" ?disabled=${disabled} @click=${useAnother}>${w.useAnother}</button>`;
}
