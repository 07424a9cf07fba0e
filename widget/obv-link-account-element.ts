import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { findConfigProblem, resolveProxyUrl } from './attributes.ts';
import { emit, type ObvAccount, type ObvErrorKind, type ObvState } from './events.ts';
import { loadPending, pendingKey, savePending } from './pending-session.ts';
import {
  endpoint,
  ProxyRequestError,
  startSession,
  watchSession,
  type SessionOutcome,
  type SessionWatch,
  type StartRequest,
  type StartedSession,
} from './session-client.ts';
import { stringsFor, type ObvStrings } from './strings.ts';
import { styles } from './obv-link-account.styles.ts';

// Icon outlines on a 24×24 grid, stroked by the stylesheet.
const BANK_ICON = 'M3 10h18M5 10v7m5-7v7m4-7v7m5-7v7M3 20h18M12 3l9 5H3z';
const CHECK_ICON = 'M5 12.5l4.5 4.5L19 7.5';
const ALERT_ICON = 'M12 7.5v6m0 3.5v.01M12 2.5a9.5 9.5 0 1 0 0 19a9.5 9.5 0 1 0 0-19';

/** The bank tab's name: "Go to the bank tab" finds it with `open('', BANK_TAB)`, which also brings it to the front. */
const BANK_TAB = 'obv-bank';

/** A fresh idempotency key; crypto.randomUUID is missing on plain-http pages, where a weaker key still dedupes. */
const randomId = (): string => crypto.randomUUID?.() ?? `${Date.now()}-${Math.random()}`;

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
 * @fires {CustomEvent<ObvAccount>} obv-success - An account was linked: `detail` is `{linkRef, accountLabel, fiName, fiAccountType}`.
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
 * @csspart button - The main button (link, go to the bank tab, change, try again).
 * @csspart secondary-button - The Cancel button (while starting or waiting, and after a failed "Change").
 * @csspart link - The link to the bank's page, shown when the new tab was blocked or after a reload.
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
    merchantUserId: { attribute: 'merchant-user-id' },
    merchantTransactionId: { attribute: 'merchant-transaction-id' },
    amount: {},
    currency: {},
    language: {},
    linkRef: { attribute: 'link-ref' },
    consumerFirstName: { attribute: 'consumer-first-name' },
    consumerLastName: { attribute: 'consumer-last-name' },
    consumerEmail: { attribute: 'consumer-email' },
    name: { reflect: true },
    required: { type: Boolean, reflect: true },
    disabled: { type: Boolean, reflect: true },
    strings: { attribute: false },
    _state: { state: true },
    _account: { state: true },
    _message: { state: true },
    _lang: { state: true },
    _label: { state: true },
    _errorKind: { state: true },
    _pending: { state: true },
    _popupBlocked: { state: true },
    _notice: { state: true },
    _hush: { state: true },
    _formDisabled: { state: true },
  };

  /** Base URL of the obv-link proxy, absolute or relative to the page. */
  declare proxyUrl: string;
  /** The merchant's id for the consumer, passed to the proxy. */
  declare merchantUserId: string | undefined;
  /** The merchant's id for this purchase, passed to the proxy. */
  declare merchantTransactionId: string | undefined;
  /** Amount as a decimal string with at most two places, e.g. "49.99". */
  declare amount: string | undefined;
  /** ISO 4217 currency code; the service supports USD only. */
  declare currency: string | undefined;
  /** Language of the element and the bank's page, e.g. "en" or "es-MX"; defaults to the page's `lang`. */
  declare language: string | undefined;
  /**
   * Link reference of an account this consumer linked before, to re-verify it instead of linking a new
   * one. The proxy honours it only for the same merchant user, as named by the merchant's server.
   */
  declare linkRef: string | undefined;
  /**
   * The consumer's first name, passed to the proxy (the provider requires it: set it here unless the
   * proxy's `enrichStart` hook adds it from your session).
   */
  declare consumerFirstName: string | undefined;
  /** The consumer's last name, passed to the proxy (required by the provider, like `consumerFirstName`). */
  declare consumerLastName: string | undefined;
  /** The consumer's e-mail address, passed to the proxy (required by the provider, like `consumerFirstName`). */
  declare consumerEmail: string | undefined;
  /** Name of the form field that carries the linked account's link reference. */
  declare name: string;
  /** Keeps the surrounding form invalid while no account is shown as linked. */
  declare required: boolean;
  /** Disables the element's buttons. */
  declare disabled: boolean;
  /** Replacements for any of the element's texts. */
  declare strings: Partial<ObvStrings> | undefined;

  private declare _state: ObvState;
  private declare _account: ObvAccount | undefined;
  private declare _message: string;
  /** The language of `_message` (the provider's text may not be in the shopper's). */
  private declare _lang: string | undefined;
  /** The account line as shown and as spoken, from the proxy; the bare label when it sent none. */
  private declare _label: [shown: string, spoken: string];
  private declare _errorKind: ObvErrorKind | undefined;
  private declare _pending: StartedSession | undefined;
  private declare _popupBlocked: boolean;
  private declare _notice: string;
  /** Empties the live region for a moment, so that an outcome that arrived while the tab was hidden is announced. */
  private declare _hush: boolean;
  private declare _formDisabled: boolean;
  #internals: ElementInternals;
  #tab: Window | null = null;
  #watch: SessionWatch | undefined;
  #aborter: AbortController | undefined;
  /** The wrong attribute's message while one is on screen; a proxy's 4xx leaves it empty (see #checkConfiguration). */
  #reportedProblem = '';

  constructor() {
    super();
    this.proxyUrl = '/obv';
    this.name = 'linkRef';
    this.required = false;
    this.disabled = false;
    this._state = 'idle';
    this._message = '';
    this._popupBlocked = false;
    this._notice = '';
    this._formDisabled = false;
    this.#internals = this.attachInternals();
  }

  /** Where the flow stands: idle, starting, waiting, success, failure, expired or error. Read-only; reflected as the `state` attribute. */
  get state(): ObvState {
    return this._state;
  }

  /**
   * The linked account the element shows, in the `success` state only. While a "Change" is under way, or
   * its failure, expiry or error is on screen, there is none (Cancel brings the previous one back).
   */
  get account(): ObvAccount | undefined {
    return this._state === 'success' ? this._account : undefined;
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
    if (this.#busy || this.#isDisabled || this.#reportedProblem) return;
    const base = resolveProxyUrl(this.proxyUrl);
    if (!base) return;
    this.#stopWatching();
    this.#forgetPending();
    // Opened synchronously inside the click, or the pop-up blocker stops it, on the proxy's "Connecting to
    // your bank…" page; navigated on to the bank once its URL is known. Opened by the sandboxed frame (see
    // render), so the frame is the tab's opener: the bank's page cannot navigate the checkout (reverse
    // tabnabbing), while this page, same-origin with the opener, may still bring the tab forward and close it.
    const tab = (this.renderRoot.querySelector('iframe')?.contentWindow ?? window).open(`${endpoint(base, 'connecting')}?lang=${this.#language}`, BANK_TAB);
    this.#tab = tab;
    this._popupBlocked = !tab;
    const idempotencyKey = randomId();
    const aborter = (this.#aborter = new AbortController());
    this._notice = '';
    this._message = '';
    this._errorKind = undefined;
    this.#setState('starting');
    emit(this, 'obv-start', { idempotencyKey });
    startSession(base, this.#requestBody(), { idempotencyKey, signal: aborter.signal }).then(
      (session) => {
        if (aborter === this.#aborter) this.#opened(base, session);
      },
      (error: Error) => {
        // A newer attempt or a cancel has taken over; this answer is stale.
        if (aborter !== this.#aborter || aborter.signal.aborted) return;
        this.#aborter = undefined;
        this.#closeTab();
        this.#showError(error instanceof ProxyRequestError ? error.kind : 'network', error.message);
      },
    );
  }

  /**
   * Stops waiting for the bank: closes the bank's tab when it can, and goes back to idle, or to the account
   * linked before. After a "Change" that failed, expired or hit a network error, it also goes back to that account.
   */
  cancel(): void {
    if (!this.#busy && !this.#canGoBack) return;
    const sessionId = this._pending?.sessionId;
    const base = resolveProxyUrl(this.proxyUrl);
    // Tell the proxy, so the bank's return page says "cancelled" and a late success is not stored.
    if (sessionId && base && this.#busy) fetch(endpoint(base, `sessions/${sessionId}/cancel`), { method: 'POST', keepalive: true }).catch(() => undefined);
    this.#closeTab();
    this.#stopWatching();
    this.#forgetPending();
    this._notice = this.#s.cancelled;
    this.#setState(this._account ? 'success' : 'idle');
    emit(this, 'obv-cancel', sessionId ? { sessionId } : {});
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // Moved in the DOM while waiting: pick the session up again. A start cut off by the move cannot resume.
    if (this.hasUpdated && this._state === 'waiting') this.#watchPending();
    if (this._state === 'starting') {
      this.#closeTab();
      this.#setState(this._account ? 'success' : 'idle');
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#aborter?.abort();
    this.#aborter = undefined;
    this.#watch?.close();
    this.#watch = undefined;
  }

  /** @internal */
  formResetCallback(): void {
    this.#closeTab();
    this.#stopWatching();
    this.#forgetPending();
    this._account = undefined;
    this._notice = '';
    if (!this.#reportedProblem) {
      this._errorKind = undefined;
      this.#setState('idle');
    }
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
    this.#checkConfiguration();
    if (!this.hasUpdated && !this.#reportedProblem) this.#resumePending();
  }

  protected override updated(): void {
    this.setAttribute('state', this._state);
    const value = this.value;
    // No saved state to restore from: a link reference is single use and short-lived, so after a
    // navigation the shopper links again rather than see an account whose reference may have paid.
    this.#internals.setFormValue(value || null);
    if (this.required && !value && !this.#isDisabled) {
      const anchor = this.renderRoot.querySelector<HTMLElement>('[part~="button"], [part~="link"]') ?? undefined;
      this.#internals.setValidity({ valueMissing: true }, this.#s.valueMissing, anchor);
    } else {
      this.#internals.setValidity({});
    }
  }

  override render(): TemplateResult {
    const s = this.#s;
    const state = this._state;
    const failed = state === 'failure' || state === 'expired' || state === 'error';
    // A wrong attribute, or a proxy that refused the request (4xx). Only the first hides the actions:
    // nothing the consumer does can fix an attribute, but the page may fix what the proxy refused.
    const misconfigured = state === 'error' && this._errorKind === 'configuration';
    const blocked = this._popupBlocked;
    const titles: Record<ObvState, string> = {
      idle: s.idleTitle,
      starting: s.starting,
      waiting: blocked ? s.blockedTitle : s.waitingTitle,
      success: s.successTitle,
      failure: s.failureTitle,
      expired: s.expiredTitle,
      error: misconfigured ? s.configurationTitle : s.networkTitle,
    };
    // "Cancelled" only on the idle screen: back on a previous account it would read "Bank account linked. Bank linking cancelled."
    const hint = state === 'idle' ? this._notice || s.idleHint : state === 'waiting' ? (blocked ? s.blockedHint : s.waitingHint) : '';
    // Only shopper-facing words here: what went wrong for the developer is in `obv-error` and the console.
    const error = state === 'failure' ? this._message : misconfigured ? s.configurationHint : state === 'expired' ? s.expiredHint : failed ? s.networkHint : '';
    // A spinner only while something is under way: a blocked pop-up waits for the shopper, not the bank.
    const icon = failed ? ALERT_ICON : state === 'success' ? CHECK_ICON : state === 'idle' || blocked ? BANK_ICON : '';
    // Written without indentation: whitespace in templates ships in the bundle.
    return html`<div part="base" class="card ${failed ? 'danger' : state}"
><div part="icon" class="icon" aria-hidden="true">${icon ? html`<svg viewBox="0 0 24 24"><path d=${icon} /></svg>` : html`<span class="spinner"></span>`}</div
><div class="body"
><div part="status" id="s" role="status" aria-live="polite"
>${this._hush ? nothing : html`<p class="title">${titles[state]}</p
>${hint ? html`<p>${hint}</p>` : nothing
}${state === 'success' && this._account ? this.#renderAccount(this._account) : nothing
}${error ? html`<p part="error" class="error" lang=${(state === 'failure' && this._lang) || nothing}>${error}</p>` : nothing}`}</div
></div
>${this.#reportedProblem ? nothing : html`<div class="actions">${this.#actions(s)}</div>`}<iframe hidden sandbox="allow-same-origin allow-popups allow-popups-to-escape-sandbox"></iframe></div>`;
  }

  #actions(s: ObvStrings): TemplateResult {
    const cancel = this.#button(s.cancel, this.cancel, 'secondary-button');
    switch (this._state) {
      case 'idle':
        return this.#button(html`<slot name="label">${s.linkAccount}</slot>`, this.start);
      case 'starting':
        return cancel;
      case 'waiting':
        return html`${this.#tab
          ? this.#button(s.showTab, this.#showTab)
          : html`<a part="link" class="primary" href=${this._pending?.consumerUrl ?? ''} target="_blank" rel="noopener" @click=${this.#linkOpened}>${s.openBank}</a>`}${cancel}`;
      case 'success':
        return this.#button(s.change, this.start, 'button', '');
      default:
        // After a failed "Change", Cancel takes the consumer back to the account linked before.
        return html`${this.#button(s.tryAgain, this.#retry)}${this.#canGoBack ? cancel : nothing}`;
    }
  }

  /** One of the element's buttons; the main one (`part="button"`) is filled with the accent unless told otherwise. */
  #button(label: unknown, onClick: () => void, part = 'button', kind = part === 'button' ? 'primary' : ''): TemplateResult {
    // Described by the status: back from the bank tab, focus lands here and the outcome is read with it.
    return html`<button part=${part} class=${kind} aria-describedby="s" ?disabled=${this.#isDisabled} @click=${onClick}>${label}</button>`;
  }

  #renderAccount(account: ObvAccount): TemplateResult {
    const [shown, spoken] = this._label;
    // "••••4321" would be read "bullet bullet bullet bullet 4321": the proxy's spoken form replaces it.
    return html`<p part="account" class="account"
><span class="fi">${account.fiName}</span
><span aria-hidden="true">${shown}</span><span class="sr">${spoken || shown}</span></p>`;
  }

  /** The `language` attribute, else the `lang` of the page around the element. */
  get #language(): string | undefined {
    return this.language ?? (this.closest('[lang]')?.getAttribute('lang') || undefined);
  }

  get #s(): ObvStrings {
    return stringsFor(this.#language, this.strings);
  }

  get #busy(): boolean {
    return this._state === 'starting' || this._state === 'waiting';
  }

  /** On a failure, expiry or network error screen after "Change": the previous account can come back. */
  get #canGoBack(): boolean {
    return !!this._account && this._state !== 'success' && !this.#reportedProblem;
  }

  get #isDisabled(): boolean {
    return this.disabled || this._formDisabled;
  }

  /** The purchase a pending session belongs to: a reload resumes it only for the same order and amount. */
  get #purchase(): string {
    return `${this.merchantTransactionId} ${this.amount}`;
  }

  get #storageKey(): string | undefined {
    const base = resolveProxyUrl(this.proxyUrl);
    return base ? pendingKey(this.name, base) : undefined;
  }

  #setState(next: ObvState): void {
    const previous = this._state;
    if (previous === next) return;
    // Re-rendering replaces the focused button; if focus was in here, bring it back to the new main control.
    // :focus-within rather than document.activeElement, which is only this when no other shadow root wraps us.
    const hadFocus = this.matches(':focus-within');
    this._state = next;
    // A screen reader ignores a live region that changes in a hidden tab: say it again once the tab is back.
    if (document.hidden) {
      document.addEventListener('visibilitychange', () => {
        this._hush = true;
        setTimeout(() => (this._hush = false), 99);
      }, { once: true });
    }
    emit(this, 'obv-state-change', { state: next, previous });
    if (hadFocus) {
      void this.updateComplete.then(() => {
        if (document.activeElement === document.body || this.matches(':focus-within')) this.focus();
      });
    }
  }

  #checkConfiguration(): void {
    const problem = findConfigProblem(this);
    if (problem) {
      if (this.#busy) {
        this.#closeTab();
        this.#stopWatching();
      }
      this._errorKind = 'configuration';
      this.#setState('error');
      if (this.#reportedProblem !== problem) {
        this.#reportedProblem = problem;
        this.#reportError('configuration', problem);
      }
    } else if (this.#reportedProblem) {
      // Only a wrong attribute is cleared here: a proxy's 4xx stays on screen until "Try again".
      this.#reportedProblem = '';
      this._errorKind = undefined;
      this.#setState(this._account ? 'success' : 'idle');
    }
  }

  #requestBody(): StartRequest {
    const body: StartRequest = {};
    for (const key of ['merchantUserId', 'merchantTransactionId', 'amount', 'currency', 'linkRef'] as const) {
      if (this[key]) body[key] = this[key];
    }
    const language = this.#language;
    if (language) body.language = language;
    // Blank ones are left out: the proxy rejects an empty field but fills a missing one from its hook.
    const consumer: Record<string, string> = {};
    for (const [key, value] of Object.entries({ firstName: this.consumerFirstName, lastName: this.consumerLastName, email: this.consumerEmail })) {
      const trimmed = value?.trim();
      if (trimmed) consumer[key] = trimmed;
    }
    if (Object.keys(consumer).length) body.consumer = consumer;
    return body;
  }

  #opened(base: URL, session: StartedSession): void {
    this.#aborter = undefined;
    this._pending = session;
    const key = this.#storageKey;
    if (key) savePending(key, session, this.#purchase);
    const tab = this.#tab;
    if (tab && !tab.closed) {
      try {
        tab.location.href = session.consumerUrl;
      } catch {
        this.#tab = null;
      }
    } else {
      this.#tab = null;
    }
    this.#setState('waiting');
    if (this.#tab) {
      emit(this, 'obv-open', { sessionId: session.sessionId, consumerUrl: session.consumerUrl });
    } else {
      this._popupBlocked = true;
      emit(this, 'obv-error', { kind: 'popup-blocked', message: 'New tab blocked' });
    }
    this.#watch = watchSession(base, session, this.#watchHandlers());
  }

  #resumePending(): void {
    const key = this.#storageKey;
    const pending = key ? loadPending(key, this.#purchase) : undefined;
    if (!pending) return;
    this._pending = pending;
    this.#setState('waiting');
    this.#watchPending();
  }

  #watchPending(): void {
    const base = resolveProxyUrl(this.proxyUrl);
    if (!base || !this._pending) return;
    this.#watch?.close();
    this.#watch = watchSession(base, this._pending, this.#watchHandlers());
  }

  #watchHandlers() {
    return {
      outcome: (outcome: SessionOutcome) => this.#settled(outcome),
      expired: () => {
        this.#finish();
        this.#setState('expired');
        emit(this, 'obv-error', { kind: 'expired', message: 'Session expired' });
      },
      networkError: (message: string) => {
        // The session may still finish: keep it, so "Try again" resumes it instead of starting over.
        this.#watch = undefined;
        this.#showError('network', message);
      },
    };
  }

  #settled(outcome: SessionOutcome): void {
    this.#finish();
    if (outcome.status === 'success') {
      const { linkRef, accountLabel, fiName, fiAccountType } = outcome;
      this._account = { linkRef, accountLabel, fiName, fiAccountType };
      this._label = [outcome.displayLabel || accountLabel, outcome.spokenLabel];
      this.#setState('success');
      emit(this, 'obv-success', { ...this._account });
    } else {
      // The proxy's words for the shopper, else the provider's own.
      this._message = outcome.text || outcome.message;
      this._lang = outcome.lang;
      this.#setState('failure');
      emit(this, 'obv-failure', { code: outcome.code, message: outcome.message });
    }
  }

  /** Ends a session that settled: the return page closes the bank's tab itself. */
  #finish(): void {
    this.#watch = undefined;
    this.#tab = null;
    this._popupBlocked = false;
    this.#forgetPending();
  }

  #showError(kind: 'network' | 'configuration', message: string): void {
    this._errorKind = kind;
    this.#setState('error');
    this.#reportError(kind, message);
  }

  /** Tells the page (obv-error) and, for a mistake in the setup, the developer's console. */
  #reportError(kind: 'network' | 'configuration', message: string): void {
    if (kind === 'configuration') console.warn('obv-link:', message);
    emit(this, 'obv-error', { kind, message });
  }

  #retry(): void {
    if (this._pending && this._errorKind === 'network') {
      this._errorKind = undefined;
      this.#setState('waiting');
      this.#watchPending();
    } else {
      this.start();
    }
  }

  #showTab(): void {
    if (this.#tab && !this.#tab.closed) {
      // tab.focus() is refused: only the tab's opener (the frame) may call it. Naming it is allowed.
      window.open('', BANK_TAB);
    } else {
      // The consumer closed the bank's tab: offer the link to open it again.
      this.#tab = null;
      this.requestUpdate();
    }
  }

  #linkOpened(): void {
    this._popupBlocked = false;
    const pending = this._pending;
    if (pending) emit(this, 'obv-open', { sessionId: pending.sessionId, consumerUrl: pending.consumerUrl });
  }

  #closeTab(): void {
    try {
      this.#tab?.close();
    } catch {
      // Already gone.
    }
    this.#tab = null;
  }

  #stopWatching(): void {
    this.#aborter?.abort();
    this.#aborter = undefined;
    this.#watch?.close();
    this.#watch = undefined;
  }

  #forgetPending(): void {
    const key = this.#storageKey;
    if (key) savePending(key);
    this._pending = undefined;
  }
}
