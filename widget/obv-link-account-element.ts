import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { findConfigProblem, flowTarget } from './attributes.ts';
import { emit, type ObvAccount, type ObvState } from './events.ts';
import { createLinkFlow, type FlowStatus } from './link-flow.ts';
import { timing } from './settings.ts';
import { stringsFor, type ObvStrings } from './strings.ts';
import { styles } from './obv-link-account.styles.ts';
import { consentBox, line, naming, savedList } from './saved-view.ts';

// Icon outlines on a 24×24 grid, stroked by the stylesheet.
const BANK_ICON = 'M3 10h18M5 10v7m5-7v7m4-7v7m5-7v7M3 20h18M12 3l9 5H3z';
const CHECK_ICON = 'M5 12.5l4.5 4.5L19 7.5';
/** The failure codes of a cancel: at the bank (the provider's) and at the checkout (the proxy's). */
const CANCEL_CODES = /^(CONSUMER_)?CANCELLED$/;
const ALERT_ICON = 'M12 7.5v6m0 3.5v.01M12 2.5a9.5 9.5 0 1 0 0 19a9.5 9.5 0 1 0 0-19';

/**
 * Links the consumer's bank account through an online bank verification, in a new tab, and becomes a
 * form control whose value is the link reference of the account it shows as linked (only in the
 * `success` state). The reference is opaque: the merchant's server redeems it with the proxy; the
 * account's token never reaches the page.
 *
 * @summary Bank account linking for checkouts.
 *
 * @fires {CustomEvent<{idempotencyKey: string}>} obv-start - A verification is being started (one key per attempt).
 * @fires {CustomEvent<{sessionId: string, consumerUrl: string}>} obv-open - The bank's page was opened for the consumer.
 * @fires {CustomEvent<ObvAccount & {displayLabel: string, spokenLabel: string}>} obv-success - An account was linked: `detail` is `{linkRef, accountLabel, fiName, fiAccountType, displayLabel, spokenLabel}` (`spokenLabel` for a live region: "Checking ending in 4321", not bullets).
 * @fires {CustomEvent<{code: string, message: string}>} obv-failure - The bank or the consumer ended the verification without an account.
 * @fires {CustomEvent<{sessionId?: string}>} obv-cancel - The consumer cancelled while waiting, or went back to the previous account after a failed "Change".
 * @fires {CustomEvent<{kind: ObvErrorKind, message: string}>} obv-error - Something kept the flow from working; `kind` is 'network', 'configuration' (a wrong attribute, or the proxy refused the request), 'popup-blocked' or 'expired'.
 * @fires {CustomEvent<{state: ObvState, previous: ObvState}>} obv-state-change - The `state` changed.
 *
 * @attr state - Reflects the read-only `state` property, for CSS (`obv-link-account[state="success"]`).
 *
 * @slot label - Replaces the text of the idle "Link your bank account" button.
 *
 * @csspart base - The card around everything.
 * @csspart icon - The round icon at the start of the card.
 * @csspart status - The live region with the title, hint, account and error.
 * @csspart account - The linked account (bank name, label and type).
 * @csspart error - The error or failure message.
 * @csspart button - The main button (link, go to the bank tab, change, try again, use another account).
 * @csspart secondary-button - The Cancel button (while starting or waiting), or "Keep <account>" after a failed "Change"; Remove and Keep beside a saved account.
 * @csspart link - The link to the bank's page, shown when the new tab was blocked or closed, or after a reload.
 *
 * @cssproperty --obv-accent - Main button and focus colour (default #2554d8).
 * @cssproperty --obv-accent-contrast - Text on the accent colour (default #fff).
 * @cssproperty --obv-radius - Corner radius of the card; buttons use a little less (default 12px).
 * @cssproperty --obv-font - Font family (default the system UI font).
 * @cssproperty --obv-text - Text colour (default #1c2434).
 * @cssproperty --obv-muted - Secondary text colour (default #5b6474).
 * @cssproperty --obv-surface - Card background (default #fff).
 * @cssproperty --obv-border - Card and secondary button border (default #dde2ea).
 * @cssproperty --obv-success - Success colour (default #13795b).
 * @cssproperty --obv-danger - Failure and error colour (default #b42318).
 */
export class ObvLinkAccountElement extends LitElement {
  static override styles = styles;
  static override shadowRootOptions: ShadowRootInit = { ...LitElement.shadowRootOptions, delegatesFocus: true };
  /** Makes the element a form control: its value is the linked account's link reference. */
  static formAssociated = true;

  // `static properties` instead of decorators: the build cannot then depend on decorator transforms.
  static override properties = {
    proxyUrl: { attribute: 'proxy-url' },
    linkToken: { attribute: 'link-token' },
    language: {},
    name: { reflect: true },
    required: { type: Boolean, reflect: true },
    disabled: { type: Boolean, reflect: true },
    strings: { attribute: false },
    _hush: { state: true },
    _quiet: { state: true },
    _formDisabled: { state: true },
  };

  /** Base URL of the obv-link proxy, absolute or relative to the page. */
  declare proxyUrl: string;
  /**
   * The link token your server got from `POST {proxy}/link-sessions` for this checkout: the proxy takes the
   * user, order, amount, consumer and language from that link session alone. Nothing about the shopper or
   * the purchase comes from the page. (Without one, only a Node app whose proxy has an `enrichStart` hook
   * can start: the hook names them.)
   */
  declare linkToken: string | undefined;
  /** Language of the element's words, e.g. "en" or "es-MX"; defaults to the page's `lang`. The bank's page takes the link session's. */
  declare language: string | undefined;
  /** Name of the form field that carries the linked account's link reference. */
  declare name: string;
  /** Keeps the surrounding form invalid while no account is shown as linked. */
  declare required: boolean;
  /** Disables the element's buttons. */
  declare disabled: boolean;
  /** Replacements for any of the element's texts. */
  declare strings: Partial<ObvStrings> | undefined;

  /** Empties the live region for a moment, so that an outcome that arrived while the tab was hidden is announced. */
  private declare _hush: boolean;
  /** The status has focus and reads itself: the live region stays quiet meanwhile, or it would be heard twice. */
  private declare _quiet: boolean;
  /** Inside a disabled `<fieldset>`. */
  private declare _formDisabled: boolean;
  #internals: ElementInternals;
  /** The offer whose "Reconnect" was brought into view and focused (once per offer). */
  #told: object | undefined;
  /**
   * The first screen waits (at most `timing.offerWaitMs`) for the saved-account offer, so that a
   * returning shopper's list or the consent box never replaces a first screen already drawn: no layout
   * shift. Until it is drawn the element has no `state` attribute, which pages reserve its space by.
   */
  #held = true;
  #flow = createLinkFlow(this, () => flowTarget(this, this.#language, () => this.#opener), (status, previous) => this.#changed(status, previous));

  constructor() {
    super();
    this.proxyUrl = '/obv';
    this.name = 'linkRef';
    this.required = false;
    this.disabled = false;
    this._formDisabled = false;
    this._quiet = false;
    this.#internals = this.attachInternals();
    this.addController(this.#flow);
  }

  /** Where the flow stands: idle, saved (a returning shopper's saved accounts), starting, waiting, success, failure, expired or error. Read-only; reflected as the `state` attribute. */
  get state(): ObvState {
    return this.#flow.status.kind;
  }

  /**
   * The linked account the element shows, in the `success` state (or the saved account chosen, once ready, in `saved`). While a "Change" is under way, or
   * its failure, expiry or error is on screen, there is none (Cancel brings the previous one back).
   */
  get account(): ObvAccount | undefined {
    const status = this.#flow.status;
    return status.kind === 'success' ? status.account : status.kind === 'saved' ? status.ready?.account : undefined;
  }

  /** The link reference of {@link account} (the form value), or an empty string. */
  get value(): string {
    return this.account?.linkRef ?? '';
  }

  /** The form the element belongs to. */
  get form(): HTMLFormElement | null {
    return this.#internals.form;
  }

  /** The element's validity, as for built-in form controls. */
  get validity(): ValidityState {
    return this.#internals.validity;
  }

  /** Why the element is invalid, or an empty string. */
  get validationMessage(): string {
    return this.#internals.validationMessage;
  }

  /** Checks validity and fires `invalid` when the element is invalid. */
  checkValidity(): boolean {
    return this.#internals.checkValidity();
  }

  /** Checks validity and shows the browser's message when the element is invalid. */
  reportValidity(): boolean {
    return this.#internals.reportValidity();
  }

  /**
   * Starts a verification, as a click on the button does. Call it from a user gesture: the bank's tab
   * is opened right away, so that pop-up blockers let it through.
   */
  start(): void {
    if (!this.#isDisabled) this.#flow.start(this.#consent);
  }

  /**
   * Stops waiting for the bank: closes the bank's tab when it can, and goes back to idle, or to the account
   * linked before. After a "Change" that failed, expired or hit a network error, it also goes back to that account.
   */
  cancel(): void {
    this.#flow.cancel();
  }

  /** @internal */
  formResetCallback(): void {
    this.#flow.reset();
  }

  /**
   * Also called while Lit reflects `disabled` in the middle of an update, where a state change would be
   * dropped (leaving the button disabled after `disabled = false`): apply it once that update is over.
   * @internal
   */
  async formDisabledCallback(disabled: boolean): Promise<void> {
    await 0;
    this._formDisabled = disabled;
  }

  protected override willUpdate(): void {
    // Cheap, and silent unless the verdict changes: no need to track which attribute changed.
    this.#flow.configure(findConfigProblem(this));
    if (!this.hasUpdated && this.state !== 'error') this.#flow.resume();
    this.#held &&= this.state === 'idle' && this.#flow.saved.loading;
  }

  protected override updated(): void {
    if (!this.#held) this.setAttribute('state', this.state);
    const value = this.value;
    // No saved state to restore from: a link reference is single use and short-lived. A reload shows the
    // linked account again only for the same link session (resume, read from the proxy), never after a navigation
    // to another purchase, where its reference may have paid.
    this.#internals.setFormValue(value || null);
    if (this.required && !value && !this.#isDisabled) {
      const anchor = this.renderRoot.querySelector<HTMLElement>('[part~="button"], [part~="link"]') ?? undefined;
      this.#internals.setValidity({ valueMissing: true }, this.#s.valueMissing, anchor);
    } else {
      this.#internals.setValidity({});
    }
  }

  override render(): TemplateResult | typeof nothing {
    if (this.#held) return nothing;
    const s = this.#s;
    const flow = this.#flow;
    const status = flow.status;
    const state = status.kind;
    const offer = flow.saved.offer;
    const error = state === 'error' ? status.error : undefined;
    const failure = state === 'failure' ? status : undefined;
    // The reconnect screen, unless the shopper chose "Use another account" there.
    const reconnect = state === 'idle' && !status.another && offer?.reconnect;
    const removed = state === 'saved' && status.removed;
    const blocked = 'blocked' in status && status.blocked;
    // The screen, named as the words are (`${screen}Title`, `${screen}Hint`). A cancel, at the bank or here,
    // is the shopper's choice: said as plainly as the checkout's own Cancel, not in red. A lost watch is no
    // failure either: it picks up again by itself, and nothing is lost.
    const screen =
      failure ? (CANCEL_CODES.test(failure.code) ? 'cancelled' : state)
      : error ? (error.watch ? 'lost' : error.kind === 'configuration' || error.service ? 'configuration' : 'network')
      : state === 'waiting' ? (status.closed ? 'closed' : blocked ? 'blocked' : state)
      : state;
    const words = s as unknown as Record<string, string | undefined>;
    // Said in red, in the error part: only shopper-facing words (what went wrong for the developer is in
    // `obv-error` and the console).
    const failed = /^(failure|expired|configuration|network)$/.test(screen);
    const text =
      failure ? failure.message
      : state === 'idle' ? (status.cancelled && s.cancelled) || (reconnect ? offer.words.reconnectHint : s.idleHint)
      : removed ? naming(s.removed ?? offer!.words.removed, removed)
      : words[`${screen}Hint`];
    // "Check now" that could not reach the proxy either says so, for the shopper who asked.
    const problem = failed ? text : error?.checked ? (error.service ? s.configurationHint : s.networkHint) : '';
    // A spinner only while something is under way: a blocked pop-up or a closed tab waits for the shopper, not the bank.
    const icon = failed ? ALERT_ICON : state === 'success' ? CHECK_ICON : /^(starting|waiting|lost)$/.test(screen) && !blocked ? '' : BANK_ICON;
    const lang = (failure?.lang || nothing) as string;
    // The build strips the indentation (vite.config.ts): whitespace with a line break is not content.
    return html`
      <div part="base" class="card ${failed ? 'danger' : state}" lang=${this.#lang}>
        <div part="icon" class="icon" aria-hidden="true">
          ${icon ? html`<svg viewBox="0 0 24 24"><path d=${icon} /></svg>` : html`<span class="spinner"></span>`}
        </div>
        <div class="body">
          <div part="status" id="s" role="status" aria-live=${this._quiet ? 'off' : 'polite'} tabindex=${this._quiet ? -1 : nothing} @blur=${this.#speak}>
            ${this._hush
              ? nothing
              : html`
                  <p class="title">
                    ${reconnect
                      ? line(reconnect.displayLabel, reconnect.spokenLabel)
                      : state === 'saved' ? offer?.words.title : words[`${screen}Title`] ?? s.starting}
                  </p>
                  ${text && !failed ? html`<p lang=${lang}>${text}</p>` : nothing}
                  ${state === 'success'
                    ? html`<p part="account" class="account"><span class="fi">${status.account.fiName}</span>${this.#line(status.label)}</p>${status.note ? html`<p>${status.note}</p>` : nothing}`
                    : nothing}
                  ${problem ? html`<p part="error" class="error" lang=${lang}>${problem}</p>` : nothing}
                `}
          </div>
        </div>
        ${error?.attribute ? nothing : html`<div class="actions">${this.#actions(s, status, screen)}</div>`}
        <iframe hidden sandbox="allow-same-origin allow-popups allow-popups-to-escape-sandbox"></iframe>
      </div>
    `;
  }

  #actions(s: ObvStrings, status: FlowStatus, screen: string): TemplateResult {
    const flow = this.#flow;
    const saved = flow.saved;
    const offer = saved.offer;
    const words = offer?.words;
    const cancel = this.#button(s.cancel, this.cancel, 1);
    // Beside every button that starts a bank step, with the consent as the shopper left it (see #consent).
    const box = consentBox(offer?.saving, this.#isDisabled, flow.consent);
    switch (status.kind) {
      case 'idle': {
        // The reconnect screen is no dead end: the other saved accounts, and "Use another account" (a plain link).
        // After "Use another account": back to the saved accounts, or to the reconnect screen.
        const reconnect = offer?.reconnect && !status.another;
        return html`${box}${this.#button(reconnect ? words!.reconnect : html`<slot name="label">${s.linkAccount}</slot>`, this.start)}${reconnect
          ? html`${offer.accounts[0] ? this.#button(words!.useSaved, saved.list, 1) : nothing}${this.#button(words!.useAnother, flow.another, 1)}`
          : status.another ? this.#button(saved.status() ? words!.useSaved : words!.reconnect, this.cancel, 1) : nothing}`;
      }
      case 'saved':
        // With saving allowed, "Use another account" first shows the consent box beside the bank button.
        return savedList(status, saved, offer?.saving ? flow.another : this.start, this.#isDisabled,
          { ...words!, removeConfirm: s.removeConfirm ?? words!.removeConfirm });
      case 'starting':
        return cancel;
      case 'waiting':
        return html`${status.tab
          ? this.#button(s.showTab, flow.showTab)
          : html`<a part="link" class="primary" href=${status.session.consumerUrl} target="_blank" rel="noopener" @click=${flow.linkOpened}>${s.openBank}</a>`}${cancel}`;
      case 'success':
        return this.#button(s.change, this.start, 2);
      default: {
        const code = status.kind === 'failure' ? status.code : '';
        const lost = screen === 'lost';
        // After a cancelled reconnect, "Reconnect" again: what the button does.
        const label = screen === 'cancelled' ? (flow.reconnecting() ? words!.reconnect : s.linkAccount)
          : /^ACCOUNT_(LOCKED|NOT_VERIFIED)$/.test(code) ? s.otherAccount
          : lost ? s.checkNow
          : s.tryAgain;
        // After a failed "Change", this takes the consumer back to the account linked before, named (its
        // line shown with bullets, read in words: the name comes from the content, so it matches what is shown).
        // One span around it all: each piece would be a flex item of its own, and the space after "Keep" lost.
        const before = flow.linkedBefore();
        const [lead, tail] = (s.keep ?? '{account}').split('{account}');
        return html`${lost ? nothing : box}${this.#button(label, this.#retry)}${before
          ? this.#button(html`<span>${lead}${this.#line(before.label)}${tail}</span>`, this.cancel, 1)
          : nothing}`;
      }
    }
  }

  /**
   * One of the element's buttons: the main one (`part="button"`, filled with the accent), a secondary one
   * (`kind` 1), or the main one unfilled (`kind` 2: "Change", where one more Enter would drop the account).
   */
  #button(label: unknown, onClick: () => void, kind = 0): TemplateResult {
    // Not described by the status: the live region says it once; a description would say it again with the button.
    return html`<button part=${kind === 1 ? 'secondary-button' : 'button'} class=${kind ? '' : 'primary'} ?disabled=${this.#isDisabled} @click=${onClick}>${label}</button>`;
  }

  /** A linked account's line: "••••4321" would be read "bullet bullet bullet bullet 4321", the proxy's spoken form replaces it. */
  #line([shown, spoken]: [string, string]): TemplateResult {
    return line(shown, spoken || shown);
  }

  #retry(): void {
    if (!this.#isDisabled) this.#flow.retry(this.#consent);
  }

  /**
   * The consent box, when the link session offers saving: ticked means "save the account I link now".
   * Without a box on screen (Change), the consent given before stands.
   */
  get #consent(): boolean | undefined {
    return this.renderRoot.querySelector<HTMLInputElement>('#consent')?.checked;
  }

  /** The `language` attribute, else the `lang` of the page around the element. */
  get #language(): string | undefined {
    return this.language ?? (this.closest('[lang]')?.getAttribute('lang') || undefined);
  }

  /** The language of the element's own words, marked on it: a Spanish element on an English page is read in Spanish. */
  get #lang(): string {
    const language = this.#language ?? '';
    return /^es(-|$)/i.test(language) ? language : 'en';
  }

  get #s(): ObvStrings {
    return stringsFor(this.#language, this.strings, this.#flow.words);
  }

  get #isDisabled(): boolean {
    return this.disabled || this._formDisabled;
  }

  /**
   * The sandboxed frame in render(): the bank tab's opener (bank-tab.ts). Before the first render (a start
   * in the same task that attached the element) there is no frame yet, and one made now would lack the
   * click's activation: the page opens the tab then, and bank-tab.ts severs the opener. Detached, none.
   */
  get #opener(): Window | undefined {
    return this.isConnected ? (this.renderRoot.querySelector('iframe')?.contentWindow ?? window) : undefined;
  }

  /** The status lost focus: from now on its changes are announced again. */
  #speak(): void {
    this._quiet = false;
  }

  /** Every new status of the flow: re-render, and on a new state tell the page and keep focus and announcements right. */
  #changed(status: FlowStatus, previous: FlowStatus): void {
    this.requestUpdate();
    const offer = this.#flow.saved.offer;
    // A payment refused as stale brings the shopper back to a checkout that says "Reconnect" (and that nothing
    // was charged): it comes into view with its button focused, on a phone too, where it starts below the fold.
    if (status.kind === 'idle' && !status.another && offer?.reconnect && this.#told !== offer) {
      this.#told = offer;
      // (Chromium scrolls a focused control that is out of view to the middle of the screen.)
      void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLElement>('[part~="button"]')?.focus());
    }
    // Re-rendering replaces the focused button; if focus was in here, bring it back to the new main control.
    // :focus-within rather than document.activeElement, which is only this when no other shadow root wraps us.
    const hadFocus = this.matches(':focus-within');
    const newState = status.kind !== previous.kind;
    // After success the main control is "Change", where one more Enter would drop the account just linked:
    // focus goes to the status instead, which reads itself (quietly for the live region).
    const toStatus = hadFocus && newState && status.kind === 'success';
    if (toStatus) this._quiet = true;
    if (hadFocus) {
      void this.updateComplete.then(() => {
        const root = this.renderRoot;
        if (toStatus) return root.querySelector<HTMLElement>('#s')?.focus();
        // A new screen, or the focused control is gone (a closed tab swaps its button for the link). On the
        // list: the question's Keep while Remove asks, else the chosen account (after a removal too: the
        // list, never the next Remove).
        const asking = status.kind === 'saved' && status.asking;
        if (asking || newState || !this.matches(':focus-within')) {
          root.querySelector<HTMLElement>(asking ? '#k' : status.kind === 'saved' ? 'input:checked, input' : '[part~="button"], [part~="link"], [part~="secondary-button"]')?.focus();
        }
      });
    }
    const reannounce = () => {
      this._hush = true;
      setTimeout(() => (this._hush = false), timing.reannouncePauseMs);
    };
    if (!newState) {
      // "Check now" that still cannot reach the proxy says so again, each time the shopper asks.
      if (status.kind === 'error') reannounce();
      return;
    }
    // A screen reader ignores a live region that changes in a hidden tab: say it again once the tab is back.
    if (document.hidden) document.addEventListener('visibilitychange', reannounce, { once: true });
    emit(this, 'obv-state-change', { state: status.kind, previous: previous.kind });
  }
}
