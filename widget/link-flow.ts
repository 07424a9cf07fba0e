// The linking flow without its view: it starts a verification, holds the bank tab, follows the session
// (session-client.ts), remembers it across a reload (pending-session.ts) and fires the element's `obv-*`
// events on its host. What it shows is one value, `status`; the element renders that and nothing else.
import type { ReactiveController } from 'lit';
import { closeBankTab, navigateBankTab, openBankTab, showBankTab } from './bank-tab.ts';
import { emit, emitSuccess, type ObvErrorKind, type ObvState } from './events.ts';
import { loadPending, savePending } from './pending-session.ts';
import { createSavedAccounts, type SavedAccounts, type SavedStatus } from './saved-accounts.ts';
import { timing } from './settings.ts';
import {
  endpoint,
  fetchSession,
  postSession,
  ProxyRequestError,
  readSession,
  startSession,
  watchSession,
  type LinkedAccount,
  type SessionWatch,
  type WatchEnd,
  type StartRequest,
  type StartedSession,
} from './session-client.ts';
import type { SessionWords } from './strings.ts';

/** Why the flow stopped: the proxy could not be reached, or it (or an attribute) refused the request. */
export interface FlowError {
  kind: 'network' | 'configuration';
  /** For the developer (the `obv-error` detail and, for configuration, the console). */
  message: string;
  /** A wrong attribute: only fixing it helps, so the element offers no action. A proxy's 4xx has none. */
  attribute?: true;
  /** The proxy or the provider failed (5xx, or no answer in time), not the shopper's network. */
  service?: true;
  /** The watch on a started session lost the proxy: nothing is lost, it resumes by itself. */
  watch?: true;
  /** "Check now" could not reach the proxy either: the element says so, for the shopper who asked. */
  checked?: boolean | undefined;
}

/** Where the flow stands; `kind` is the element's `state`. */
export type FlowStatus =
  /** `another`: a returning shopper chose "Use another account" (the saved accounts are one step back). */
  | { kind: 'idle'; cancelled: boolean; another?: true }
  /** A returning shopper's saved accounts (saved-accounts.ts). */
  | SavedStatus
  | { kind: 'starting'; blocked: boolean }
  /**
   * `tab`: the bank tab is held (else the element offers a link); `blocked`: the browser blocked it;
   * `closed`: the shopper closed it before finishing.
   */
  | { kind: 'waiting'; session: StartedSession; tab: boolean; blocked: boolean; closed: boolean }
  | ({ kind: 'success' } & LinkedAccount)
  /**
   * `message` in the shopper's words when the proxy had them, in the language `lang`; `code` the
   * provider's (a cancel at the bank is no failure to the shopper, a locked account needs another one).
   */
  | { kind: 'failure'; message: string; lang: string; code: string }
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
  /** The window that opens the bank tab (see bank-tab.ts); none while the element is not on the page. Asked only to start. */
  tabOpener: () => Window | undefined;
  request: StartRequest;
}

/** The page's side of a start, read when it is needed; `undefined` while `proxy-url` is unusable. */
export type TargetReader = () => FlowTarget | undefined;

/** Called on every new status, before the event that comes with it. */
export type StatusListener = (status: FlowStatus, previous: FlowStatus) => void;

/** A fresh idempotency key; crypto.randomUUID is missing on plain-http pages, where a weaker key still dedupes. */
const randomId = (): string => crypto.randomUUID?.() ?? String(Math.random());

/**
 * One element's linking flow. As a Lit controller it stops listening when the element leaves the page and
 * picks the session up again when it comes back. Its methods need no `this`: they can be event listeners.
 */
export interface LinkFlow extends ReactiveController {
  readonly status: FlowStatus;
  /** On a failure, expiry or error screen after "Change": the account "Keep …" brings back, else none. */
  linkedBefore(): LinkedAccount | undefined;
  /**
   * Starts a verification (`save`: the consent box as the shopper left it; without a box, the consent given
   * at the last start, so a retry or a "Change" never drops it). Call it from a user gesture: the bank tab opens right away.
   */
  start(save?: boolean): void;
  /** The consent the next start carries, unless the shopper changes the box: what the consent box shows. */
  readonly consent: boolean;
  /** The words the last start's answer carried for the states that follow it (widget/strings.ts). */
  readonly words: SessionWords | undefined;
  /** The saved accounts offered with the page's link token, and the shopper's choice among them. */
  readonly saved: SavedAccounts;
  /**
   * "Use another account" when the link session allows saving: the bank step's screen with its consent
   * box (which would read as the chosen saved account's, beside the list), and the list one step back.
   */
  another(): void;
  /**
   * Stops waiting for the bank (closing its tab when it can) and goes back to idle, or to the account
   * linked before; after a "Change" that failed, expired or hit a network error, also back to that account.
   */
  cancel(): void;
  /** "Try again" (`save` as for start): asks about the same session again after a lost connection ("Check now"), else starts a new one. */
  retry(save?: boolean): void;
  /** Forgets everything, the linked account too (the form was reset); a wrong attribute stays on screen. */
  reset(): void;
  /** Picks up the session a previous page of this tab started for the same link session: a reload while the consumer was at the bank, or after linking. */
  resume(): void;
  /**
   * Shows the developer's message for a wrong attribute, or `undefined` once the attributes are usable. Only
   * a wrong attribute is cleared here: a proxy's 4xx stays on screen until "Try again".
   */
  configure(problem: string | undefined): void;
  /** "Go to the bank tab"; when the consumer closed it, the element says so and offers the link instead. */
  showTab(): void;
  /** The consumer opened the bank's page with the link (the tab was blocked, closed, or lost on a reload). */
  linkOpened(): void;
  hostConnected(): void;
  hostDisconnected(): void;
}

/**
 * The flow of the element `host` (it receives the `obv-*` events). A closure, like watchSession: its state
 * is the variables below.
 */
export function createLinkFlow(host: EventTarget, target: TargetReader, changed: StatusListener): LinkFlow {
  let status: FlowStatus = { kind: 'idle', cancelled: false };
  /** The bank tab, while the flow holds one. */
  let tab: Window | null = null;
  let aborter: AbortController | undefined;
  /** Ends the page listeners (visibility, online) when the element leaves the page. */
  let listening: AbortController | undefined;
  let watch: SessionWatch | undefined;
  /** The session waited on; kept through a network error, so "Try again" resumes it instead of starting over. */
  let pending: StartedSession | undefined;
  /** The last start's words: they outlive its session (the outcome's screen, "Keep …" after a failed Change). */
  let words: SessionWords | undefined;
  /** The account linked last: Cancel after a failed "Change" brings it back. */
  let linked: LinkedAccount | undefined;
  let blocked = false;
  let cancelled = false;
  /** The last start reconnects the saved account the link session re-authorizes (not "Use another account"). */
  let reconnecting = false;
  let closed = false;
  /** The shopper ticked "save" at the last start: a restart from any screen keeps it. */
  let consent = false;

  const busy = () => status.kind === 'starting' || status.kind === 'waiting';
  /** The wrong attribute's message while one is on screen. */
  const wrongAttribute = () => (status.kind === 'error' && status.error.attribute ? status.error.message : undefined);
  const canGoBack = () =>
    (!!linked || !!saved.status()) && status.kind !== 'success' && status.kind !== 'saved' && !wrongAttribute();
  /** Waiting with the watch lost: it picks up again by itself (back online, or back on the page). */
  const lostWatch = () => status.kind === 'error' && !!status.error.watch;

  const set = (next: FlowStatus) => {
    const previous = status;
    status = next;
    changed(next, previous);
  };
  /** Where Cancel and a fixed attribute lead: the account linked before, else the saved accounts, else idle. */
  const rest = (): FlowStatus =>
    linked ? { kind: 'success', ...linked } : (saved.status() ?? { kind: 'idle', cancelled });
  const waiting = (session: StartedSession): FlowStatus => ({ kind: 'waiting', session, tab: !!tab, blocked, closed });
  const refreshWaiting = () => {
    if (status.kind === 'waiting') set(waiting(status.session));
  };
  const announceOpen = ({ sessionId, consumerUrl }: StartedSession) =>
    emit(host, 'obv-open', { sessionId, consumerUrl });

  const closeTab = () => {
    tab = closeBankTab(tab);
  };
  const stopWatching = () => {
    aborter?.abort();
    aborter = undefined;
    watch?.close();
    watch = undefined;
  };
  /**
   * Holds `session` as the one waited on and remembers it for a reload; `done`: its account is linked (a
   * reload shows it again, not waited on); without one, forgets it.
   */
  const remember = (session?: StartedSession, done?: boolean) => {
    pending = done ? undefined : session;
    words = session?.words ?? words;
    const page = target();
    if (page) savePending(page.storageKey, session, page.purchase, done);
  };
  /** Lets the session go: no tab, no watch, nothing to resume. */
  const abandon = () => {
    closeTab();
    stopWatching();
    remember();
  };

  /** Tells the page (obv-error) and, for a mistake in the setup, the developer's console. */
  const report = (kind: ObvErrorKind, message: string) => {
    if (kind === 'configuration') console.warn('obv-link:', message);
    emit(host, 'obv-error', { kind, message });
  };
  const fail = (error: FlowError) => {
    set({ kind: 'error', error });
    report(error.kind, error.message);
  };
  // The shopper's own "Use another account" is not undone by an answer about the list.
  const saved = createSavedAccounts(
    host,
    () => status.kind === 'saved',
    (next) => {
      if (status.kind === 'saved' || (status.kind === 'idle' && !status.another)) set(next ?? rest());
    },
  );

  /**
   * The proxy cannot be reached while a session is under way (offline, or the watch gave up): the session
   * may still finish, so `pending` stays and the flow asks again by itself (see wake). Said once; again only
   * to the shopper who pressed "Check now" (`checked`).
   */
  const lose = (message: string, checked?: boolean) => {
    // A watch that is still trying stops: the flow asks again itself, once (see wake and recheck).
    stopWatching();
    if (checked || !lostWatch()) fail({ kind: 'network', message, watch: true, checked });
  };

  /** How the watch on the session ended. */
  const ended = (end: WatchEnd) => {
    watch = undefined;
    if (end.kind === 'network') return lose(end.message);
    // The bank tab goes at once, whatever the end: settled, the shopper is back on the checkout that shows
    // it (the return page would close the tab too, a moment later); expired, the bank's page can no longer
    // finish, before the shopper signs in for nothing. A linked account stays remembered for a reload.
    closeTab();
    blocked = closed = false;
    remember(end.kind === 'success' ? pending : undefined, true);
    if (end.kind === 'expired') {
      set({ kind: 'expired' });
      report('expired', 'Session expired');
    } else if (end.kind === 'success') {
      const { account, label, note } = end;
      linked = { account, label, note };
      set(rest());
      emitSuccess(host, end);
    } else {
      const { code, message, text, lang } = end;
      // A cancel (the bank's CONSUMER_CANCELLED, any code ending so) is the shopper's choice, as the checkout's own Cancel is: back where they were
      // (the reconnect screen with the account's name and "Use another account", the saved accounts, the
      // account linked before), with "Bank linking cancelled." under the first screen. Anything else: the
      // proxy's words for the shopper, else the provider's own.
      if (code.endsWith('CANCELLED')) {
        cancelled = true;
        set(rest());
      } else {
        set({ kind: 'failure', message: text || message, lang, code });
      }
      emit(host, 'obv-failure', { code, message });
    }
  };

  const watchPending = () => {
    const base = target()?.base;
    if (!base || !pending) return;
    watch?.close();
    watch = watchSession(base, pending, ended);
  };

  /**
   * Asks the proxy about the session waited on, now. Its end settles the flow (a bank step finished while
   * the connection was down shows its account); still waiting, it is followed again; unreachable, the
   * connection is lost — never a closed tab (`checked`: the shopper pressed "Check now"). `tabGone`: the
   * bank tab closed, said only when the session still waits for the bank (the return page closes the tab
   * itself just after the bank step), with the link offered.
   */
  const recheck = (checked?: boolean, tabGone?: boolean) => {
    const session = pending;
    const base = target()?.base;
    if (!session || !base) return;
    fetchSession(base, session.sessionId).then(
      (snapshot) => {
        if (pending !== session) return;
        if (snapshot.kind !== 'pending') {
          stopWatching();
          return ended(snapshot);
        }
        if (tabGone && !snapshot.returned) closed = true;
        // Followed again unless a watch runs (a lost connection or a reload ended the last one).
        if (!watch) watchPending();
        set(waiting(session));
      },
      (error: Error) => pending === session && lose(error.message, checked),
    );
  };
  /** The bank tab is gone though the session may not be done (see recheck); `always` (truthy; a number is shorter in the budgeted bundle): ask the proxy all the same. */
  const checkTab = (always?: unknown) => {
    const gone = status.kind === 'waiting' && !!tab?.closed;
    if (gone) tab = null;
    if (gone || always) recheck(false, gone);
  };
  /**
   * The page is visible or online again (back from the bank tab, a locked phone): ask the proxy
   * about the session, in case a message was lost or the connection was, and look at the tab.
   */
  const wake = () => {
    if (document.hidden) return;
    // A saved account chosen while offline is used now.
    saved.retry(1);
    checkTab(1);
    // The tab that just closed may not say so yet when its checkout comes back to the front, and the
    // network may not carry requests yet when the browser says it is back online: both are asked again.
    setTimeout(checkTab, 500, 1);
  };

  const opened = (base: URL, session: StartedSession) => {
    aborter = undefined;
    remember(session);
    // A tab closed while it said "Connecting to your bank…" (its "Back to checkout") was not blocked.
    closed = !!tab?.closed;
    tab = navigateBankTab(tab, session.consumerUrl);
    if (!tab) blocked = !closed;
    set(waiting(session));
    if (tab) announceOpen(session);
    else if (blocked) report('popup-blocked', 'New tab blocked');
    watch = watchSession(base, session, ended);
  };

  const start = (save?: boolean) => {
    const page = target();
    if (busy() || wrongAttribute() || !page) return;
    consent = save ?? consent;
    const opener = page.tabOpener();
    // Opened by the page itself, the bank's tab could navigate the checkout (reverse tabnabbing).
    if (!opener) return report('configuration', 'start() needs the element on the page');
    const previous = status;
    stopWatching();
    remember();
    const idempotencyKey = randomId();
    const attempt = (aborter = new AbortController());
    const version = consent && saved.offer?.saving?.version;
    // From the reconnect screen, or "Try again" after a reconnect; anything else links another account.
    const reconnect = !!saved.offer?.reconnect;
    reconnecting =
      reconnect &&
      (previous.kind === 'idle'
        ? !previous.another
        : previous.kind !== 'saved' && previous.kind !== 'success' && reconnecting);
    const request = {
      ...page.request,
      ...(version ? { consent: version } : {}),
      ...(reconnect && !reconnecting ? { another: true as const } : {}),
    };
    // A provider that hangs is the service's failure, not the shopper's: give up in time and say so.
    const timeout = AbortSignal.timeout(timing.startTimeoutMs);
    // The request leaves first: opening the tab takes the page's thread a while (a new tab, its holding page).
    startSession(page.base, request, idempotencyKey, AbortSignal.any([attempt.signal, timeout])).then(
      (session) => attempt === aborter && opened(page.base, session),
      (error: Error) => {
        // A newer attempt or a cancel has taken over; this answer is stale.
        if (attempt !== aborter) return;
        aborter = undefined;
        closeTab();
        const timedOut = timeout.aborted;
        const refused = error instanceof ProxyRequestError ? error : undefined;
        fail({
          kind: refused?.kind ?? 'network',
          message: timedOut ? `No answer within ${timing.startTimeoutMs} ms` : error.message,
          ...(timedOut || (refused?.status ?? 0) >= 500 ? { service: true } : {}),
        });
      },
    );
    // Still inside the click: pop-up blockers let the tab through.
    tab = openBankTab(opener, `${endpoint(page.base, 'connecting')}?lang=${page.language}`);
    blocked = !tab;
    cancelled = closed = false;
    set({ kind: 'starting', blocked });
    emit(host, 'obv-start', { idempotencyKey });
  };

  return {
    get status() {
      return status;
    },
    get consent() {
      return consent;
    },
    get words() {
      return words;
    },
    // After a failed "Use another account", "Keep …" brings back the saved account chosen before.
    linkedBefore: () => (canGoBack() ? (linked ?? saved.status()?.ready) : undefined),
    start,
    saved,
    another() {
      // From the list, or from the reconnect screen: a plain link, the consent box beside it.
      if (status.kind === 'saved' || (status.kind === 'idle' && saved.offer?.reconnect))
        set({ kind: 'idle', cancelled: false, another: true });
    },
    cancel() {
      // While starting or waiting, also offline while the bank step may still finish (a lost watch).
      const session = (busy() || lostWatch()) && pending;
      if (!session && !busy() && !canGoBack()) return;
      const base = target()?.base;
      abandon();
      cancelled = true;
      set(rest());
      emit(host, 'obv-cancel', session ? { sessionId: session.sessionId } : {});
      // Tell the proxy, so the bank's return page says "cancelled" and a late success is not stored. Its answer
      // says what the session ended as: a success that landed at this very moment cannot be undone (the merchant
      // hears it), so it is shown; one not yet released to this browser (the bank step's binding) is followed.
      if (session && base) {
        postSession(base, 'cancel', session.sessionId, { keepalive: true }).then(
          (body) => {
            const end = readSession(body);
            if (end.kind !== 'failure' && end.kind !== 'expired' && !pending && !busy()) {
              pending = session;
              if (end.kind === 'success') ended(end);
              else watchPending();
            }
          },
          () => undefined,
        );
      }
    },
    retry(save) {
      if (pending && lostWatch()) recheck(true);
      else start(save);
    },
    reset() {
      abandon();
      linked = undefined;
      cancelled = consent = false;
      if (!wrongAttribute()) set(rest());
    },
    resume() {
      const page = target();
      const remembered = page && loadPending(page.storageKey, page.purchase);
      if (!remembered) return;
      pending = remembered;
      words = remembered.words;
      // Linked before the reload: the proxy still has the account (its link reference), unless the session ended since.
      if (remembered.done) return recheck();
      set(waiting(remembered));
      watchPending();
    },
    configure(problem) {
      const shown = wrongAttribute();
      const page = !problem && target();
      // A usable link token: what it offers a returning shopper (once per token).
      if (page) saved.load(page.base, page.request.linkToken);
      if (problem === shown) return;
      if (problem) {
        if (busy()) {
          closeTab();
          stopWatching();
        }
        fail({ kind: 'configuration', message: problem, attribute: true });
      } else if (shown) {
        set(rest());
      }
    },
    showTab() {
      // Closed, or closed a moment ago without saying so yet (showBankTab): the element says so.
      if (tab?.closed || !showBankTab(tab)) {
        tab = null;
        if (status.kind === 'waiting') recheck(false, true);
      }
    },
    linkOpened() {
      blocked = closed = false;
      refreshWaiting();
      if (pending) announceOpen(pending);
    },
    // Moved in the page: follow the session again. A start cut off by the move cannot resume.
    hostConnected() {
      listening = new AbortController();
      document.addEventListener('visibilitychange', wake, listening);
      addEventListener('online', wake, listening);
      // A bank step in a window of its own never hides the checkout, so no visibility change says when it
      // closed: the tab is looked at every second while waiting (a no-op otherwise).
      const timer = setInterval(checkTab, 1_000);
      listening.signal.onabort = () => clearInterval(timer);
      // Offline, said at once: the watch would take its retries to give up (the connection may come back first).
      addEventListener('offline', () => status.kind === 'waiting' && lose('offline'), listening);
      if (status.kind === 'waiting') watchPending();
      if (status.kind === 'starting') {
        closeTab();
        set(rest());
      }
    },
    // Left the page: stop listening, but keep the session to pick up again.
    hostDisconnected() {
      listening?.abort();
      stopWatching();
    },
  };
}
