// Returning shoppers (docs/CONTRACTS.md §2, saved accounts): what the proxy offers for the page's link
// token — the shopper's saved accounts under ids of this link session, the words to show them with, the
// consent words when saving is allowed, an account to reconnect — and the shopper's choices: use one (a
// link reference at once, no bank step, which the page gets once the shopper confirmed the choice: only
// then may the merchant's server pay with it), or remove one. The part of the flow (link-flow.ts) that holds them.
import { emitSuccess } from './events.ts';
import { timing } from './settings.ts';
import { parseOutcome, post as postTo, type LinkedAccount, type ProxyRequestError } from './session-client.ts';

/** An offered account: the proxy's id for it in this link session, the bank, the line as shown and as spoken. */
export interface OfferedAccount {
  id: string;
  fiName: string;
  displayLabel: string;
  spokenLabel: string;
}

/** Words the proxy writes in the link session's language (proxy/words/offer.ts, consent.ts). */
export type Words = Record<
  | 'lang'
  | 'title'
  | 'useAnother'
  | 'useSaved'
  | 'remove'
  | 'removeConfirm'
  | 'removed'
  | 'keep'
  | 'reconnect'
  | 'reconnectHint'
  | Problem
  | 'checkbox'
  | 'text'
  | 'more'
  | 'details'
  | 'version',
  string
>;

/**
 * Why the last choice or removal did not go through; the list stays, and says it in the proxy's words:
 * `offline` (tried again by itself once the browser is back online), `busy` (the proxy's rate limit, 429),
 * `down` (the proxy could not, or was out of reach while the browser is online).
 */
export type Problem = 'offline' | 'busy' | 'down';

export interface Offer {
  accounts: OfferedAccount[];
  words: Words;
  /** The consent box's label (`checkbox`), the authorization `text`, and their `version`. */
  saving?: Words;
  reconnect?: OfferedAccount;
}

/**
 * The saved-account list: the account chosen, its link once the proxy gave it (its `linkRef`, the form
 * value, empty until confirmed), one asked about removing, one just removed, why the last choice failed.
 */
export interface SavedStatus {
  kind: 'saved';
  accounts: OfferedAccount[];
  chosen: string;
  ready?: LinkedAccount | undefined;
  asking?: string | undefined;
  removed?: OfferedAccount | undefined;
  problem?: Problem | undefined;
}

/** The flow's side of the saved accounts. */
export interface SavedAccounts {
  readonly offer: Offer | undefined;
  /** The offer for the link token is on its way (the element holds its first screen meanwhile). */
  readonly loading: boolean;
  /** The saved-account list to rest on, while there is one (with an account to reconnect, once the shopper asked for it). */
  status(): SavedStatus | undefined;
  /** "Pay with a saved account" from the reconnect screen: the list, its first account chosen. */
  list(): void;
  /** Asks the shopper to confirm removing `id` (none: the question goes away). */
  ask(id?: string): void;
  /** Loads the offer once per link token (none if the proxy cannot say: the bank button stays). */
  load(base: URL, linkToken: string | undefined): void;
  /** Uses `id` (again, when it is chosen but not ready: a failed attempt). */
  choose(id: string): void;
  /** Confirms the ready choice: its `linkRef` is set once the proxy released it to the merchant's server; else the list says why. */
  confirm(): Promise<unknown> | undefined;
  remove(id: string): void;
  /** Tries the failed choice again ("Try again"); `auto` (back online): only one that failed offline. */
  retry(auto?: unknown): void;
}

/**
 * `showing` says whether the flow shows the list; `show` puts a new list (or, given none, the flow's
 * rest) in place of the list or the idle screen. The choice outlives a "Use another account" that the
 * shopper cancels, and a failure: the list stays, the account chosen, and says why.
 */
export function createSavedAccounts(
  host: EventTarget,
  showing: () => boolean,
  show: (status?: SavedStatus) => void,
): SavedAccounts {
  let offer: Offer | undefined;
  let loading = false;
  let linkToken: string | undefined;
  let base: URL;
  let chosen = '';
  let ready: LinkedAccount | undefined;
  let asking: string | undefined;
  let removed: OfferedAccount | undefined;
  let problem: Problem | undefined;
  /** The ready choice's link reference, held back from its `linkRef` until confirmed; the confirmation on its way. */
  let linkRef = '';
  let confirming: Promise<unknown> | undefined;
  /** The choice whose request is on its way: one at a time, so arrowing through the list sends the latest only. */
  let picking: string | undefined;
  /** With an account to reconnect, the reconnect screen comes first; the list once the shopper asks for it. */
  let listing = false;
  const status = (): SavedStatus | undefined =>
    offer?.accounts[0] && (listing || !offer.reconnect)
      ? { kind: 'saved', accounts: offer.accounts, chosen, ready, asking, removed, problem }
      : undefined;
  /** POST {base}/saved-accounts/{action}: the answer's JSON, or a ProxyRequestError. */
  const post = (action: string, savedAccountId?: string) =>
    postTo(base, `saved-accounts/${action}`, { linkToken, savedAccountId });

  /** Says why a request failed, and keeps the list (a confirmation is never made again by itself: no `offline`). */
  const failed = (error: ProxyRequestError, offline = !navigator.onLine) => {
    problem = error.status === 429 ? 'busy' : !error.status && offline ? 'offline' : 'down';
    asking = undefined;
    show(status());
  };

  /** Asks the proxy for the chosen account's link; a newer choice made meanwhile goes next. */
  const pick = () => {
    const id = (picking = chosen);
    post('use', id).then(
      (outcome) => {
        picking = undefined;
        const linked = parseOutcome(outcome);
        if (chosen !== id) return chosen && pick();
        if (linked?.kind !== 'success') return;
        // Chosen is not confirmed: the page has the account, and its reference once the shopper confirms it.
        linkRef = linked.account.linkRef;
        linked.account.linkRef = '';
        ready = linked;
        show(status());
        emitSuccess(host, linked);
      },
      (error: ProxyRequestError) => {
        picking = undefined;
        if (chosen !== id) return chosen && pick();
        failed(error);
      },
    );
  };

  const choose = (id: string) => {
    if (id === chosen && ready) return;
    chosen = id;
    // A new choice is a new one to confirm (one on its way for the previous choice changes nothing).
    asking = ready = problem = confirming = undefined;
    show(status());
    if (!picking) pick();
  };

  const confirm = () => {
    const at = ready;
    const ref = linkRef;
    if (at && !at.account.linkRef)
      confirming ??= postTo(base, 'saved-accounts/confirm', { linkRef: ref })
        .then(
          () => {
            if (ready !== at) return;
            at.account.linkRef = ref;
            problem = undefined;
            show(status());
          },
          (error: ProxyRequestError) => ready === at && failed(error, false),
        )
        .finally(() => (confirming = undefined));
    return confirming;
  };

  /** The first account offered, if any, is used (the list preselects it, so the form is ready for the shop's Pay button). */
  const chooseFirst = () => {
    const first = offer?.accounts[0];
    if (first) choose(first.id);
  };

  return {
    get offer() {
      return offer;
    },
    get loading() {
      return loading;
    },
    status,
    load(url, token) {
      if (!token || token === linkToken) return;
      linkToken = token;
      base = url;
      offer = ready = asking = removed = undefined;
      listing = false;
      loading = true;
      // A proxy slow to answer: the first screen is drawn without the offer after a while (the list replaces it when it comes).
      setTimeout(() => {
        if (loading) {
          loading = false;
          show();
        }
      }, timing.offerWaitMs);
      // No offer (the proxy could not say): the first-time screen, drawn now if it was held for the offer.
      post('offer')
        .catch(() => undefined)
        .then((answer) => {
          if (linkToken !== token) return;
          loading = false;
          offer = answer as Offer | undefined;
          chosen = '';
          show(status());
          if (showing()) chooseFirst();
        });
    },
    choose,
    confirm,
    list() {
      listing = true;
      show(status());
      if (!chosen) chooseFirst();
    },
    ask(id) {
      asking = id;
      removed = undefined;
      show(status());
    },
    retry(auto) {
      // A choice that failed is made again; a confirmation that failed is asked again.
      if (problem && chosen && (!auto || problem === 'offline')) void (ready ? confirm() : choose(chosen));
    },
    remove(id) {
      problem = undefined;
      post('remove', id).then(() => {
        removed = offer!.accounts.find((account) => account.id === id);
        asking = undefined;
        offer = { ...offer!, accounts: offer!.accounts.filter((account) => account.id !== id) };
        if (chosen === id) chosen = '';
        // Without its last account the list gives way to the flow's rest (the bank button).
        show(status());
        if (!chosen) chooseFirst();
      }, failed);
    },
  };
}
