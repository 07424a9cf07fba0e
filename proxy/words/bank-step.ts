// The element's words for the states that follow a start (waiting on the bank, a blocked or closed tab, a
// lost connection, the outcome's titles and buttons), sent with the start's answer (verifications/view.ts) rather
// than built into the element: every word in its bundle costs every merchant's shoppers bytes, and these
// are only needed once the proxy has answered. Both languages, keyed by primary subtag: the element picks
// its own language (its `language` attribute or the page's `lang`), as for the words it keeps (widget/strings.ts).
// A page's `strings` still replace any of them.

export interface BankStepWords {
  waitingTitle: string;
  waitingHint: string;
  showTab: string;
  blockedTitle: string;
  blockedHint: string;
  openBank: string;
  closedTitle: string;
  closedHint: string;
  lostTitle: string;
  lostHint: string;
  checkNow: string;
  expiredTitle: string;
  expiredHint: string;
  successTitle: string;
  change: string;
  failureTitle: string;
  /** Instead of "Try again" when the same account cannot work (locked, not verifiable). */
  otherAccount: string;
  /** A cancel at the bank: said as plainly as the checkout's own Cancel. */
  cancelledTitle: string;
}

export const BANK_STEP_WORDS: Readonly<Record<'en' | 'es', BankStepWords>> = {
  en: {
    waitingTitle: 'Continue in the bank tab',
    waitingHint: 'Finish at your bank in the other tab. This page updates when you’re done.',
    showTab: 'Go to the bank tab',
    blockedTitle: 'Your browser blocked the new tab',
    blockedHint: 'Open your bank’s page with this link. This page updates when you’re done.',
    openBank: 'Open your bank’s page',
    closedTitle: 'The bank tab was closed',
    closedHint: 'Open your bank’s page again to finish, or cancel.',
    lostTitle: 'Waiting for the connection',
    lostHint: 'Nothing is lost: if you finished at your bank, this page updates by itself when the connection is back.',
    checkNow: 'Check now',
    expiredTitle: 'The bank session expired',
    expiredHint: 'Please start again.',
    successTitle: 'Bank account linked',
    change: 'Change',
    failureTitle: 'We couldn’t link your account',
    otherAccount: 'Link another account',
    cancelledTitle: 'Bank linking cancelled',
  },
  es: {
    waitingTitle: 'Continúa en la pestaña del banco',
    waitingHint: 'Termina en tu banco en la otra pestaña. Esta página se actualiza al terminar.',
    showTab: 'Ir a la pestaña del banco',
    blockedTitle: 'Tu navegador bloqueó la pestaña nueva',
    blockedHint: 'Abre la página de tu banco con este enlace. Esta página se actualiza al terminar.',
    openBank: 'Abrir la página del banco',
    closedTitle: 'Se cerró la pestaña del banco',
    closedHint: 'Vuelve a abrir la página de tu banco para terminar, o cancela.',
    lostTitle: 'Esperando la conexión',
    lostHint: 'No se ha perdido nada: si terminaste en tu banco, esta página se actualiza sola cuando vuelva la conexión.',
    checkNow: 'Comprobar ahora',
    expiredTitle: 'La sesión del banco caducó',
    expiredHint: 'Vuelve a empezar.',
    successTitle: 'Cuenta bancaria vinculada',
    change: 'Cambiar',
    failureTitle: 'No pudimos vincular tu cuenta',
    otherAccount: 'Vincular otra cuenta',
    cancelledTitle: 'Vinculación bancaria cancelada',
  },
};
