// Every word the element shows, in English and Spanish. Merchants can override any of them through the
// element's `strings` property (e.g. to match their checkout's tone) without forking the component.
// The words of the states after a start come with the start's answer (proxy/words/bank-step.ts),
// so they cost the bundle nothing; the catalogues below hold the words needed before, or without, the proxy.

/** The words the start's answer carries, in both languages (proxy/words/bank-step.ts). */
type FromProxy =
  | 'waitingTitle'
  | 'waitingHint'
  | 'showTab'
  | 'blockedTitle'
  | 'blockedHint'
  | 'openBank'
  | 'closedTitle'
  | 'closedHint'
  | 'lostTitle'
  | 'lostHint'
  | 'checkNow'
  | 'expiredTitle'
  | 'expiredHint'
  | 'successTitle'
  | 'change'
  | 'failureTitle'
  | 'otherAccount'
  | 'cancelled'
  | 'keep';

/** Per primary language subtag: the words a start's answer carries. */
export type SessionWords = Partial<Record<string, Partial<ObvStrings>>>;

/** The texts `<obv-link-account>` shows. */
export interface ObvStrings {
  idleTitle: string;
  linkAccount: string;
  idleHint: string;
  starting: string;
  waitingTitle: string;
  waitingHint: string;
  showTab: string;
  cancel: string;
  blockedTitle: string;
  blockedHint: string;
  openBank: string;
  successTitle: string;
  change: string;
  failureTitle: string;
  tryAgain: string;
  expiredTitle: string;
  expiredHint: string;
  networkTitle: string;
  networkHint: string;
  configurationTitle: string;
  configurationHint: string;
  valueMissing: string;
  /** Under the first screen's title after a Cancel (while the start was under way and had no answer yet, the first screen's own hint). */
  cancelled: string;
  closedTitle: string;
  closedHint: string;
  lostTitle: string;
  lostHint: string;
  checkNow: string;
  /** The button back to the account linked before a failed "Change"; `{account}` is that account's line (alone when the proxy has not said these words yet). */
  keep: string;
  /** Instead of "Try again" when the same account cannot work (locked, not verifiable). */
  otherAccount: string;
  /**
   * Returning shoppers' words come from the proxy, in the link session's language; these replace them.
   * The question before removing a saved account; `{account}` is its bank and line.
   */
  removeConfirm?: string;
  /** Said once a saved account is removed; `{account}` as above. */
  removed?: string;
}

const en: Omit<ObvStrings, FromProxy> = {
  idleTitle: 'Pay from your bank account',
  linkAccount: 'Link your bank account',
  idleHint: 'Verify securely with your bank.',
  starting: 'Connecting to your bank…',
  cancel: 'Cancel',
  tryAgain: 'Try again',
  networkTitle: 'Connection problem',
  networkHint: 'Check your internet connection, then try again.',
  configurationTitle: 'Bank linking is not available',
  configurationHint: 'Please choose another way to pay, or try again later.',
  valueMissing: 'Link a bank account to continue.',
};

const es: Omit<ObvStrings, FromProxy> = {
  idleTitle: 'Paga desde tu cuenta bancaria',
  linkAccount: 'Vincular cuenta bancaria',
  idleHint: 'Verifica de forma segura con tu banco.',
  starting: 'Conectando con tu banco…',
  cancel: 'Cancelar',
  tryAgain: 'Intentar de nuevo',
  networkTitle: 'Problema de conexión',
  networkHint: 'Revisa tu conexión a internet e inténtalo de nuevo.',
  configurationTitle: 'La vinculación bancaria no está disponible',
  configurationHint: 'Elige otra forma de pago o inténtalo más tarde.',
  valueMissing: 'Vincula una cuenta bancaria para continuar.',
};

/** The built-in catalogues, keyed by primary language subtag. */
export const catalogues: Readonly<Record<'en' | 'es', Omit<ObvStrings, FromProxy>>> = { en, es };

/**
 * The strings for a BCP 47 language tag ("es", "es-MX", "en-US"…); unknown languages get English.
 * `fromProxy`: the last start's words (in the same language); `overrides` replace individual entries.
 */
export function stringsFor(
  language: string | undefined,
  overrides?: Partial<ObvStrings>,
  fromProxy?: SessionWords,
): ObvStrings {
  const primary = /^es(-|$)/i.test(language ?? '') ? 'es' : 'en';
  return { ...catalogues[primary], ...fromProxy?.[primary], ...overrides } as ObvStrings;
}
