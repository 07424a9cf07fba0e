// The linking flow without its view: it starts a verification, holds the bank tab, follows the session
// (session-client.ts), remembers it across a reload (pending-session.ts) and fires the element's `obv-*`
// events on its host. What it shows is one value, `status`; the element renders that and nothing else.
import type { ReactiveController } from 'lit';
import { closeBankTab, navigateBankTab, openBankTab, showBankTab } from './bank-tab.ts';
import { emit, type ObvAccount, type ObvState } from './events.ts';
import { loadPending, savePending } from './pending-session.ts';
import { endpoint, ProxyRequestError, startSession, watchSession, type SessionOutcome, type SessionWatch, type StartRequest, type StartedSession, type WatchHandlers } from './session-client.ts';

/** Why the flow stopped: the proxy could not be reached, or it (or an attribute) refused the request. */
export interface FlowError {
  kind: 'network' | 'configuration';
  /** For the developer (the `obv-error` detail and, for configuration, the console). */
  message: string;
  /** A wrong attribute: only fixing it helps, so the element offers no action. A proxy's 4xx has none. */
  attribute?: true;
}

/** A linked account as the element shows it: the account line as shown and as spoken (from the proxy). */
export interface LinkedAccount {
  account: ObvAccount;
  label: [shown: string, spoken: string];
}

/** Where the flow stands; `kind` is the element's `state`. */
export type FlowStatus =
  | { kind: 'idle'; cancelled: boolean }
  | { kind: 'starting'; blocked: boolean }
  /** `tab`: the bank tab is held (else the element offers a link); `blocked`: the browser blocked it. */
  | { kind: 'waiting'; session: StartedSession; tab: boolean; blocked: boolean }
  | ({ kind: 'success' } & LinkedAccount)
  /** `message` in the shopper's words when the proxy had them, in the language `lang`. */
  | { kind: 'failure'; message: string; lang: string }
  | { kind: 'expired' }
  | { kind: 'error'; error: FlowError };

// Guards that every status is one of the element's states.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
true satisfies Same<FlowStatus['kind'], ObvState>;

/** What a start needs from the page, read when it is needed. */
export interface FlowTarget {
  /** The proxy's base URL. */
  base: URL;
  /** Where a started session is remembered (see pending-session.ts). */
  storageKey: string;
  /** The purchase a remembered session belongs to: a reload resumes it only for the same one. */
  purchase: string;
  /** The language of the proxy's holding page in the bank tab. */
  language: string | undefined;
  /** The window that opens the bank tab (see bank-tab.ts). */
  opener: Window;
  request: StartRequest;
}

/** The page's side of a start, read when it is needed; `undefined` while `proxy-url` is unusable. */
export type TargetReader = () => FlowTarget | undefined;

/** Called on every new status, before the event that comes with it. */
export type StatusListener = (status: FlowStatus, previous: FlowStatus) => void;

/** A fresh idempotency key; crypto.randomUUID is missing on plain-http pages, where a weaker key still dedupes. */
const randomId = (): string => crypto.randomUUID?.() ?? `${Date.now()}-${Math.random()}`;

/**
 * One element's linking flow. As a Lit controller it stops listening when the element leaves the page and
 * picks the session up again when it comes back.
 */
export class LinkFlow implements ReactiveController, WatchHandlers {
  #status: FlowStatus = { kind: 'idle', cancelled: false };
  readonly #host: EventTarget;
  readonly #target: TargetReader;
  readonly #changed: StatusListener;
  /** The bank tab, while the flow holds one. */
  #tab: Window | null = null;
  #aborter: AbortController | undefined;
  #watch: SessionWatch | undefined;
  /** The session waited on; kept through a network error, so "Try again" resumes it instead of starting over. */
  #pending: StartedSession | undefined;
  /** The account linked last: Cancel after a failed "Change" brings it back. */
  #linked: LinkedAccount | undefined;
  #blocked = false;
  #cancelled = false;

  /** `host` receives the `obv-*` events. */
  constructor(host: EventTarget, target: TargetReader, changed: StatusListener) {
    this.#host = host;
    this.#target = target;
    this.#changed = changed;
  }

  get status(): FlowStatus {
    return this.#status;
  }

  /** Starting, or waiting on the bank. */
  get #busy(): boolean {
    return this.#status.kind === 'starting' || this.#status.kind === 'waiting';
  }

  /** On a failure, expiry or error screen after "Change": Cancel brings the previous account back. */
  get canGoBack(): boolean {
    return !!this.#linked && this.#status.kind !== 'success' && !this.#wrongAttribute;
  }

  /** Starts a verification. Call it from a user gesture: the bank tab opens right away. */
  start(): void {
    const target = this.#target();
    if (this.#busy || this.#wrongAttribute || !target) return;
    this.#stopWatching();
    this.#forgetPending();
    this.#tab = openBankTab(target.opener, `${endpoint(target.base, 'connecting')}?lang=${target.language}`);
    this.#blocked = !this.#tab;
    const idempotencyKey = randomId();
    const aborter = (this.#aborter = new AbortController());
    this.#cancelled = false;
    this.#set({ kind: 'starting', blocked: this.#blocked });
    emit(this.#host, 'obv-start', { idempotencyKey });
    startSession(target.base, target.request, { idempotencyKey, signal: aborter.signal }).then(
      (session) => {
        if (aborter === this.#aborter) this.#opened(target.base, session);
      },
      (error: Error) => {
        // A newer attempt or a cancel has taken over; this answer is stale.
        if (aborter !== this.#aborter || aborter.signal.aborted) return;
        this.#aborter = undefined;
        this.#closeTab();
        this.#fail(error instanceof ProxyRequestError ? error.kind : 'network', error.message);
      },
    );
  }

  /**
   * Stops waiting for the bank (closing its tab when it can) and goes back to idle, or to the account
   * linked before; after a "Change" that failed, expired or hit a network error, also back to that account.
   */
  cancel(): void {
    if (!this.#busy && !this.canGoBack) return;
    const sessionId = this.#pending?.sessionId;
    const base = this.#target()?.base;
    // Tell the proxy, so the bank's return page says "cancelled" and a late success is not stored.
    if (sessionId && base && this.#busy) fetch(endpoint(base, `sessions/${sessionId}/cancel`), { method: 'POST', keepalive: true }).catch(() => undefined);
    this.#abandon();
    this.#cancelled = true;
    this.#set(this.#rest());
    emit(this.#host, 'obv-cancel', sessionId ? { sessionId } : {});
  }

  /** "Try again": follows the same session again after a network error, else starts a new one. */
  retry(): void {
    const pending = this.#pending;
    if (pending && this.#status.kind === 'error' && this.#status.error.kind === 'network') {
      this.#set(this.#waiting(pending));
      this.#watchPending();
    } else {
      this.start();
    }
  }

  /** Forgets everything, the linked account too (the form was reset); a wrong attribute stays on screen. */
  reset(): void {
    this.#abandon();
    this.#linked = undefined;
    this.#cancelled = false;
    if (!this.#wrongAttribute) this.#set(this.#rest());
  }

  /** Picks up the session a previous page of this tab started (a reload while the consumer was at the bank). */
  resume(): void {
    const target = this.#target();
    const pending = target && loadPending(target.storageKey, target.purchase);
    if (!pending) return;
    this.#pending = pending;
    this.#set(this.#waiting(pending));
    this.#watchPending();
  }

  /**
   * Shows the developer's message for a wrong attribute, or `undefined` once the attributes are usable. Only
   * a wrong attribute is cleared here: a proxy's 4xx stays on screen until "Try again".
   */
  configure(problem: string | undefined): void {
    const shown = this.#wrongAttribute;
    if (problem === shown) return;
    if (problem) {
      if (this.#busy) {
        this.#closeTab();
        this.#stopWatching();
      }
      this.#set({ kind: 'error', error: { kind: 'configuration', message: problem, attribute: true } });
      this.#report('configuration', problem);
    } else if (shown) {
      this.#set(this.#rest());
    }
  }

  /** "Go to the bank tab"; when the consumer closed it, the element offers the link instead. */
  showTab(): void {
    this.#tab = showBankTab(this.#tab);
    if (!this.#tab) this.#refreshWaiting();
  }

  /** The consumer opened the bank's page with the link (the tab was blocked, closed, or lost on a reload). */
  linkOpened(): void {
    this.#blocked = false;
    this.#refreshWaiting();
    if (this.#pending) this.#announceOpen(this.#pending);
  }

  /** Moved in the page: follow the session again. A start cut off by the move cannot resume. */
  hostConnected(): void {
    if (this.#status.kind === 'waiting') this.#watchPending();
    if (this.#status.kind === 'starting') {
      this.#closeTab();
      this.#set(this.#rest());
    }
  }

  /** Left the page: stop listening, but keep the session to pick up again (see hostConnected). */
  hostDisconnected(): void {
    this.#stopWatching();
  }

  /** The wrong attribute's message while one is on screen. */
  get #wrongAttribute(): string | undefined {
    const status = this.#status;
    return status.kind === 'error' && status.error.attribute ? status.error.message : undefined;
  }

  #set(status: FlowStatus): void {
    const previous = this.#status;
    this.#status = status;
    this.#changed(status, previous);
  }

  /** Where Cancel and a fixed attribute lead: the account linked before, else idle. */
  #rest(): FlowStatus {
    return this.#linked ? { kind: 'success', ...this.#linked } : { kind: 'idle', cancelled: this.#cancelled };
  }

  #waiting(session: StartedSession): FlowStatus {
    return { kind: 'waiting', session, tab: !!this.#tab, blocked: this.#blocked };
  }

  #refreshWaiting(): void {
    if (this.#status.kind === 'waiting') this.#set(this.#waiting(this.#status.session));
  }

  #opened(base: URL, session: StartedSession): void {
    this.#aborter = undefined;
    this.#pending = session;
    const target = this.#target();
    if (target) savePending(target.storageKey, session, target.purchase);
    this.#tab = navigateBankTab(this.#tab, session.consumerUrl);
    if (!this.#tab) this.#blocked = true;
    this.#set(this.#waiting(session));
    if (this.#tab) this.#announceOpen(session);
    else emit(this.#host, 'obv-error', { kind: 'popup-blocked', message: 'New tab blocked' });
    this.#watch = watchSession(base, session, this);
  }

  #announceOpen({ sessionId, consumerUrl }: StartedSession): void {
    emit(this.#host, 'obv-open', { sessionId, consumerUrl });
  }

  #watchPending(): void {
    const base = this.#target()?.base;
    if (!base || !this.#pending) return;
    this.#watch?.close();
    this.#watch = watchSession(base, this.#pending, this);
  }

  /** @internal From the watch (WatchHandlers): the session ended with an outcome. */
  outcome(outcome: SessionOutcome): void {
    this.#finish();
    if (outcome.status === 'success') {
      const { linkRef, accountLabel, fiName, fiAccountType } = outcome;
      const account = { linkRef, accountLabel, fiName, fiAccountType };
      this.#linked = { account, label: [outcome.displayLabel || accountLabel, outcome.spokenLabel] };
      this.#set({ kind: 'success', ...this.#linked });
      emit(this.#host, 'obv-success', { ...account });
    } else {
      // The proxy's words for the shopper, else the provider's own.
      this.#set({ kind: 'failure', message: outcome.text || outcome.message, lang: outcome.lang });
      emit(this.#host, 'obv-failure', { code: outcome.code, message: outcome.message });
    }
  }

  /** @internal From the watch (WatchHandlers): the session expired. */
  expired(): void {
    this.#finish();
    this.#set({ kind: 'expired' });
    emit(this.#host, 'obv-error', { kind: 'expired', message: 'Session expired' });
  }

  /** @internal From the watch (WatchHandlers): the proxy stayed out of reach. */
  networkError(message: string): void {
    // The session may still finish: #pending stays, so "Try again" resumes it.
    this.#watch = undefined;
    this.#fail('network', message);
  }

  /** Ends a session that settled: the return page closes the bank's tab itself. */
  #finish(): void {
    this.#watch = undefined;
    this.#tab = null;
    this.#blocked = false;
    this.#forgetPending();
  }

  #fail(kind: FlowError['kind'], message: string): void {
    this.#set({ kind: 'error', error: { kind, message } });
    this.#report(kind, message);
  }

  /** Tells the page (obv-error) and, for a mistake in the setup, the developer's console. */
  #report(kind: FlowError['kind'], message: string): void {
    if (kind === 'configuration') console.warn('obv-link:', message);
    emit(this.#host, 'obv-error', { kind, message });
  }

  /** Lets the session go: no tab, no watch, nothing to resume. */
  #abandon(): void {
    this.#closeTab();
    this.#stopWatching();
    this.#forgetPending();
  }

  #closeTab(): void {
    this.#tab = closeBankTab(this.#tab);
  }

  #stopWatching(): void {
    this.#aborter?.abort();
    this.#aborter = undefined;
    this.#watch?.close();
    this.#watch = undefined;
  }

  #forgetPending(): void {
    const target = this.#target();
    if (target) savePending(target.storageKey);
    this.#pending = undefined;
  }
}
