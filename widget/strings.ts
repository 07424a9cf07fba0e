// Every word the element shows, in English and Spanish. Merchants can override any of them through the
// element's `strings` property (e.g. to match their checkout's tone) without forking the component.

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
  cancelled: string;
  closedTitle: string;
  closedHint: string;
  serviceTitle: string;
  serviceHint: string;
  lostTitle: string;
  lostHint: string;
  checkNow: string;
  cancelledTitle: string;
  /** The button back to the account linked before a failed "Change"; `{account}` is that account's line. */
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

const en: ObvStrings = {
  idleTitle: 'Pay from your bank account',
  linkAccount: 'Link your bank account',
  idleHint: 'Verify securely with your bank in a new tab.',
  starting: 'Connecting to your bank…',
  waitingTitle: 'Continue in the bank tab',
  waitingHint: 'Finish at your bank in the other tab. This page updates when you’re done.',
  showTab: 'Go to the bank tab',
  cancel: 'Cancel',
  blockedTitle: 'Your browser blocked the new tab',
  blockedHint: 'Open your bank’s page with this link. This page updates when you’re done.',
  openBank: 'Open your bank’s page',
  successTitle: 'Bank account linked',
  change: 'Change',
  failureTitle: 'We couldn’t link your account',
  tryAgain: 'Try again',
  expiredTitle: 'The bank session expired',
  expiredHint: 'Please start again.',
  networkTitle: 'Connection problem',
  networkHint: 'We couldn’t reach the server. Check your connection.',
  configurationTitle: 'Bank linking is not available',
  configurationHint: 'Please choose another way to pay, or try again later.',
  valueMissing: 'Link a bank account to continue.',
  cancelled: 'Bank linking cancelled.',
  closedTitle: 'The bank tab was closed',
  closedHint: 'Open your bank’s page again to finish, or cancel.',
  serviceTitle: 'Bank linking is not responding',
  serviceHint: 'The problem is on our side, not your connection. Please try again in a moment.',
  lostTitle: 'Waiting for the connection',
  lostHint: 'Nothing is lost: if you finished at your bank, this page updates by itself when the connection is back.',
  checkNow: 'Check now',
  cancelledTitle: 'Bank linking cancelled',
  keep: 'Keep {account}',
  otherAccount: 'Link another account',
};

const es: ObvStrings = {
  idleTitle: 'Paga desde tu cuenta bancaria',
  linkAccount: 'Vincular cuenta bancaria',
  idleHint: 'Verifica de forma segura con tu banco en una pestaña nueva.',
  starting: 'Conectando con tu banco…',
  waitingTitle: 'Continúa en la pestaña del banco',
  waitingHint: 'Termina en tu banco en la otra pestaña. Esta página se actualiza al terminar.',
  showTab: 'Ir a la pestaña del banco',
  cancel: 'Cancelar',
  blockedTitle: 'Tu navegador bloqueó la pestaña nueva',
  blockedHint: 'Abre la página de tu banco con este enlace. Esta página se actualiza al terminar.',
  openBank: 'Abrir la página del banco',
  successTitle: 'Cuenta bancaria vinculada',
  change: 'Cambiar',
  failureTitle: 'No pudimos vincular tu cuenta',
  tryAgain: 'Intentar de nuevo',
  expiredTitle: 'La sesión del banco caducó',
  expiredHint: 'Vuelve a empezar.',
  networkTitle: 'Problema de conexión',
  networkHint: 'No pudimos contactar con el servidor. Revisa tu conexión.',
  configurationTitle: 'La vinculación bancaria no está disponible',
  configurationHint: 'Elige otra forma de pago o inténtalo más tarde.',
  valueMissing: 'Vincula una cuenta bancaria para continuar.',
  cancelled: 'Vinculación bancaria cancelada.',
  closedTitle: 'Se cerró la pestaña del banco',
  closedHint: 'Vuelve a abrir la página de tu banco para terminar, o cancela.',
  serviceTitle: 'La vinculación bancaria no responde',
  serviceHint: 'El problema es nuestro, no de tu conexión. Inténtalo de nuevo en un momento.',
  lostTitle: 'Esperando la conexión',
  lostHint: 'No se ha perdido nada: si terminaste en tu banco, esta página se actualiza sola cuando vuelva la conexión.',
  checkNow: 'Comprobar ahora',
  cancelledTitle: 'Vinculación bancaria cancelada',
  keep: 'Usar {account}',
  otherAccount: 'Vincular otra cuenta',
};

/** The built-in catalogues, keyed by primary language subtag. */
export const catalogues: Readonly<Record<'en' | 'es', ObvStrings>> = { en, es };

/**
 * The strings for a BCP 47 language tag ("es", "es-MX", "en-US"…); unknown languages get English.
 * `overrides` replace individual entries.
 */
export function stringsFor(language: string | undefined, overrides?: Partial<ObvStrings>): ObvStrings {
  const primary = (language ?? '').toLowerCase().split('-')[0];
  const base = primary === 'es' ? es : en;
  return overrides ? { ...base, ...overrides } : base;
}
