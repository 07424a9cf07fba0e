import { LitElement, nothing, type TemplateResult } from 'lit';
import { findConfigProblem, flowTarget } from './attributes.ts';
import { emit, type ObvAccount, type ObvState } from './events.ts';
import { createLinkFlow, type FlowStatus } from './link-flow.ts';
import { timing } from './settings.ts';
import { stringsFor, type ObvStrings } from './strings.ts';
import { styles } from './obv-link-account.styles.ts';
import { card } from './views.ts';

/**
 * Links the consumer's bank account through an online bank verification, in a new tab, and becomes a
 * form control whose value is the link reference of the account it shows as linked (in the `success`
 * state; a returning shopper's saved account once confirmed, which the form's submit does). The reference
 * is opaque: the merchant's server redeems it with the proxy; the account's token never reaches the page.
 *
 * @summary Bank account linking for checkouts.
 *
 * @fires {CustomEvent<{idempotencyKey: string}>} obv-start - A verification is being started (one key per attempt).
 * @fires {CustomEvent<{sessionId: string, consumerUrl: string}>} obv-open - The bank's page was opened for the consumer.
 * @fires {CustomEvent<ObvAccount & {displayLabel: string, spokenLabel: string}>} obv-success - An account was linked, or a saved account chosen: `detail` is `{linkRef, accountLabel, fiName, fiAccountType, displayLabel, spokenLabel}` (`spokenLabel` for a live region: "Checking ending in 4321", not bullets; `linkRef` empty for a saved account: see `confirm()`).
 * @fires {CustomEvent<{code: string, message: string}>} obv-failure - The bank or the consumer ended the verification without an account.
 * @fires {CustomEvent<{sessionId?: string}>} obv-cancel - The consumer cancelled while waiting, or went back to the previous account after a failed "Change".
 * @fires {CustomEvent<{kind: ObvErrorKind, message: string}>} obv-error - Something kept the flow from working; `kind` is 'network', 'configuration' (a wrong attribute, or the proxy refused the request), 'popup-blocked' or 'expired'.
 * @fires {CustomEvent<{state: ObvState, previous: ObvState}>} obv-state-change - The `state` changed.
 * @fires {Event} change - The form `value` changed, as native form controls say it, or a chosen saved account became ready (its value comes once confirmed); also with no new state: a saved account withdrawn while another one is chosen.
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
 * @cssproperty --obv-accent - Main button and focus colour (default #2554d8; #93b4ff in a dark colour scheme).
 * @cssproperty --obv-accent-contrast - Text on the accent colour (default #fff; #0b1020 dark).
 * @cssproperty --obv-radius - Corner radius of the card; buttons use a little less (default 12px).
 * @cssproperty --obv-font - Font family (default the system UI font).
 * @cssproperty --obv-text - Text colour (default #1c2434; #eef0f3 dark).
 * @cssproperty --obv-muted - Secondary text colour (default #5b6474; #b7bfcc dark).
 * @cssproperty --obv-surface - Card background (default #fff; #1f242b dark).
 * @cssproperty --obv-border - Card and secondary button border (default #dde2ea; #3a414c dark).
 * @cssproperty --obv-success - Success colour (default #13795b; #6fd3a8 dark).
 * @cssproperty --obv-danger - Failure and error colour, and the confirming Remove (default #b42318; #ff8a80 dark).
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

  // Members named `_…` are internal: the view (views.ts, CardHost) reads them; the build shortens them.
  /** @internal Empties the live region for a moment, so that an outcome that arrived while the tab was hidden is announced. */
  declare _hush: boolean;
  /** @internal The status has focus and reads itself: the live region stays quiet meanwhile, or it would be heard twice. */
  declare _quiet: boolean;
  /** Inside a disabled `<fieldset>`. */
  declare private _formDisabled: boolean;
  #internals: ElementInternals;
  /** The offer whose "Reconnect" was brought into view and focused (once per offer). */
  #told: object | undefined;
  /**
   * The first screen waits (at most `timing.offerWaitMs`) for the saved-account offer, so that a
   * returning shopper's list or the consent box never replaces a first screen already drawn: no layout
   * shift. Until it is drawn the element has no `state` attribute, which pages reserve its space by.
   */
  #held = true;
  /** The form value of the last update (a space for a saved account chosen, not yet confirmed): `change` fires when it changes. */
  #value = '';
  /** The form whose submit confirms a chosen saved account (formAssociatedCallback), and a submit held meanwhile. */
  #form: HTMLFormElement | null = null;
  #holding = false;
  /** @internal */
  readonly _flow = createLinkFlow(
    this,
    () => flowTarget(this, this.#language, () => this.#opener),
    (status, previous) => this.#changed(status, previous),
  );

  constructor() {
    super();
    this.proxyUrl = '/obv';
    this.name = 'linkRef';
    this.required = false;
    this.disabled = false;
    this._formDisabled = false;
    this._quiet = false;
    this.#internals = this.attachInternals();
    this.addController(this._flow);
    // Escape closes what is open: Remove's question (as Keep does), or the wait for the bank (as Cancel does).
    this.addEventListener('keydown', (event) => {
      const status = this._flow.status;
      const asking = status.kind === 'saved' && status.asking;
      if (event.key !== 'Escape' || !(asking || status.kind === 'starting' || status.kind === 'waiting')) return;
      // Handled here: a dialog around the element stays open.
      event.preventDefault();
      event.stopPropagation();
      if (asking) this._flow.saved.ask();
      else this.cancel();
    });
  }

  /** Where the flow stands: idle, saved (a returning shopper's saved accounts), starting, waiting, success, failure, expired or error. Read-only; reflected as the `state` attribute. */
  get state(): ObvState {
    return this._flow.status.kind;
  }

  /**
   * The linked account the element shows, in the `success` state (or the saved account chosen, once ready, in
   * `saved`: its `linkRef` is empty until {@link confirm} or the form's submit confirmed it). While a "Change"
   * is under way, or its failure, expiry or error is on screen, there is none (Cancel brings the previous one back).
   */
  get account(): ObvAccount | undefined {
    const status = this._flow.status;
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
    if (!this._off) this._flow.start(this.#consent);
  }

  /**
   * Stops waiting for the bank: closes the bank's tab when it can, and goes back to idle, or to the account
   * linked before. After a "Change" that failed, expired or hit a network error, it also goes back to that account.
   */
  cancel(): void {
    this._flow.cancel();
  }

  /**
   * The account your server may pay with, `linkRef` included: a saved account chosen on the element is
   * confirmed now (the proxy releases it to your server: `link.succeeded`, payable); an account linked
   * through the bank is so already. None when no account is shown, or the confirmation failed: the element
   * then says why, and the shopper tries again. The form's submit calls it by itself.
   */
  async confirm(): Promise<ObvAccount | undefined> {
    // The form value is set by the update that follows.
    if (this.state === 'saved') {
      await this._flow.saved.confirm();
      await this.updateComplete;
    }
    return this.account?.linkRef ? this.account : undefined;
  }

  /**
   * The form's submit, before the page's own listeners (capture, at the target): a chosen saved account
   * holds it, is confirmed, and the form is submitted again by the same button (the shopper clicks once);
   * a failed confirmation stops it, and the element says why.
   * @internal
   */
  formAssociatedCallback(form: HTMLFormElement | null): void {
    this.#form?.removeEventListener('submit', this.#submit, true);
    (this.#form = form)?.addEventListener('submit', this.#submit, true);
  }

  #submit = (event: SubmitEvent): void => {
    if (this._off || this.account?.linkRef !== '') return;
    event.preventDefault();
    event.stopImmediatePropagation();
    if (this.#holding) return;
    this.#holding = true;
    void this.confirm().then((account) => {
      this.#holding = false;
      if (account) this.#form?.requestSubmit(event.submitter);
    });
  };

  /** @internal */
  formResetCallback(): void {
    this._flow.reset();
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
    this._flow.configure(findConfigProblem(this));
    if (!this.hasUpdated && this.state !== 'error') this._flow.resume();
    this.#held &&= this.state === 'idle' && this._flow.saved.loading;
  }

  protected override updated(): void {
    if (!this.#held) this.setAttribute('state', this.state);
    const value = this.value;
    // No saved state to restore from: a link reference is single use and short-lived. A reload shows the
    // linked account again only for the same link session (resume, read from the proxy), never after a navigation
    // to another purchase, where its reference may have paid.
    this.#internals.setFormValue(value || null);
    // A form control's change, for the page's Pay button: also a saved account ready to confirm, or withdrawn
    // while another one is being chosen, where the state stays the same.
    const shown = value || (this.account ? ' ' : '');
    if (shown !== this.#value) {
      this.#value = shown;
      this.dispatchEvent(new Event('change', { bubbles: true }));
    }
    // A chosen saved account counts: its value comes with the submit that confirms it.
    if (this.required && !this.account && !this._off) {
      const anchor = this.renderRoot.querySelector<HTMLElement>('[part~="button"], [part~="link"]') ?? undefined;
      this.#internals.setValidity({ valueMissing: true }, this._s.valueMissing, anchor);
    } else {
      this.#internals.setValidity({});
    }
  }

  override render(): TemplateResult | typeof nothing {
    return this.#held ? nothing : card(this);
  }

  /** @internal "Try again" (or "Check now"), with the consent box as the shopper left it. */
  _retry(): void {
    if (!this._off) this._flow.retry(this.#consent);
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

  /** @internal The language of the element's own words, marked on it: a Spanish element on an English page is read in Spanish. */
  get _lang(): string {
    const language = this.#language ?? '';
    return /^es(-|$)/i.test(language) ? language : 'en';
  }

  /** @internal The element's words: its own, the proxy's since the last start, the page's `strings` over them. */
  get _s(): ObvStrings {
    return stringsFor(this.#language, this.strings, this._flow.words);
  }

  /** @internal Disabled, by its attribute or a disabled `<fieldset>`. */
  get _off(): boolean {
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

  /** @internal The status lost focus: from now on its changes are announced again. */
  _speak(): void {
    this._quiet = false;
  }

  /** Every new status of the flow: re-render, and on a new state tell the page and keep focus and announcements right. */
  #changed(status: FlowStatus, previous: FlowStatus): void {
    this.requestUpdate();
    const offer = this._flow.saved.offer;
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
          root
            .querySelector<HTMLElement>(
              asking
                ? '#k'
                : status.kind === 'saved'
                  ? 'input:checked, input'
                  : '[part~="button"], [part~="link"], [part~="secondary-button"]',
            )
            ?.focus();
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
