// The element's words for the states that follow a start (waiting on the bank, a blocked or closed bank
// page, a lost connection, the outcome's titles and buttons), sent with the start's answer (verifications/view.ts) rather
// than built into the element: every word in its bundle costs every merchant's shoppers bytes, and these
// are only needed once the proxy has answered. Both languages, keyed by primary subtag: the element picks
// its own language (its `language` attribute or the page's `lang`), as for the words it keeps (widget/strings.ts).
// A page's `strings` still replace any of them. They name the bank's page, never a tab: on a phone, and in
// an app's browser (the hosted page), the bank may open in a window or view of its own.

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
  /** Under the first screen's title after the checkout's own Cancel. */
  cancelled: string;
  /** The button back to the account linked before a failed "Change"; `{account}` is that account's line. */
  keep: string;
}

export const BANK_STEP_WORDS: Readonly<Record<'en' | 'es', BankStepWords>> = {
  en: {
    waitingTitle: 'Continue at your bank',
    waitingHint: 'Finish at your bank. This page updates when you’re done.',
    showTab: 'Go to your bank',
    blockedTitle: 'Your browser blocked your bank’s page',
    blockedHint: 'Open your bank’s page with this link. This page updates when you’re done.',
    openBank: 'Open your bank’s page',
    closedTitle: 'Your bank’s page was closed',
    closedHint: 'Open your bank’s page again to finish, or cancel.',
    lostTitle: 'Waiting for the connection',
    lostHint: 'Nothing is lost: if you finished at your bank, this page updates by itself when the connection is back.',
    checkNow: 'Check now',
    expiredTitle: 'Your bank session timed out',
    expiredHint: 'It ended before you finished at your bank. Nothing was charged: start again when you’re ready.',
    successTitle: 'Bank account linked',
    change: 'Change',
    failureTitle: 'We couldn’t link your account',
    otherAccount: 'Link another account',
    cancelled: 'Bank linking cancelled.',
    keep: 'Keep {account}',
  },
  es: {
    waitingTitle: 'Continúa en tu banco',
    waitingHint: 'Termina en tu banco. Esta página se actualiza cuando termines.',
    showTab: 'Ir a tu banco',
    blockedTitle: 'Tu navegador bloqueó la página de tu banco',
    blockedHint: 'Abre la página de tu banco con este enlace. Esta página se actualiza cuando termines.',
    openBank: 'Abrir la página de tu banco',
    closedTitle: 'Se cerró la página de tu banco',
    closedHint: 'Vuelve a abrir la página de tu banco para terminar, o cancela.',
    lostTitle: 'Esperando la conexión',
    lostHint: 'No se perdió nada: si terminaste en tu banco, esta página se actualiza sola cuando vuelva la conexión.',
    checkNow: 'Comprobar ahora',
    expiredTitle: 'Se agotó el tiempo de tu sesión bancaria',
    expiredHint: 'Terminó antes de que acabaras en tu banco. No se cobró nada: vuelve a empezar cuando quieras.',
    successTitle: 'Cuenta bancaria vinculada',
    change: 'Cambiar',
    failureTitle: 'No pudimos vincular tu cuenta',
    otherAccount: 'Vincular otra cuenta',
    cancelled: 'Vinculación bancaria cancelada.',
    keep: 'Usar {account}',
  },
};
