// The sandbox bank's words in English and Spanish: the page follows the verification request's
// `transaction.language` ("es", "es-MX"… get Spanish, anything else English), as a real bank's would.

export interface BankPageText {
  lang: 'en' | 'es';
  signInTitle: string;
  signInHeading: (bank: string) => string;
  /** `merchant`: the merchant's name on file, if any. */
  signInLead: (amount: string, merchant?: string) => string;
  username: string;
  password: string;
  signIn: string;
  cancel: string;
  incorrectCredentials: string;
  sandboxNote: string;
  footer: string;
  expiredTitle: string;
  expiredHeading: string;
  expiredLead: string;
  unknownTitle: string;
  unknownHeading: string;
  unknownLead: string;
  doneTitle: string;
  doneHeading: string;
  doneLead: string;
}

const CONSUMERS = '<code>user_good</code> / <code>pass_good</code>';

const en: BankPageText = {
  lang: 'en',
  signInTitle: 'Sign in',
  signInHeading: (bank) => `Sign in to ${bank}`,
  signInLead: (amount, merchant) =>
    `${merchant ?? 'A merchant'} asks to verify your bank account for a payment of ${amount}. Sign in to link your account.`,
  username: 'Username',
  password: 'Password',
  signIn: 'Sign in',
  cancel: 'Cancel',
  incorrectCredentials: 'Incorrect username or password',
  sandboxNote: `Sandbox test consumers: ${CONSUMERS} (checking), <code>user_savings</code> / <code>pass_good</code> (savings), <code>user_bad</code> and <code>user_locked</code> (failures).`,
  footer: 'Sandbox environment – no real bank is contacted.',
  expiredTitle: 'Link expired',
  expiredHeading: 'This link has expired',
  expiredLead:
    'This verification link was already used or is too old. Return to the merchant and start the verification again.',
  unknownTitle: 'Link not valid',
  unknownHeading: 'This link is not valid',
  unknownLead: 'Return to the merchant and start the verification again.',
  doneTitle: 'Done',
  doneHeading: 'You are done',
  doneLead: 'You can close this window and return to the merchant.',
};

const es: BankPageText = {
  lang: 'es',
  signInTitle: 'Iniciar sesión',
  signInHeading: (bank) => `Inicia sesión en ${bank}`,
  signInLead: (amount, merchant) =>
    `${merchant ?? 'Un comercio'} pide verificar tu cuenta bancaria para un pago de ${amount}. Inicia sesión para vincular tu cuenta.`,
  username: 'Usuario',
  password: 'Contraseña',
  signIn: 'Iniciar sesión',
  cancel: 'Cancelar',
  incorrectCredentials: 'Usuario o contraseña incorrectos',
  sandboxNote: `Consumidores de prueba del sandbox: ${CONSUMERS} (corriente), <code>user_savings</code> / <code>pass_good</code> (ahorros), <code>user_bad</code> y <code>user_locked</code> (fallos).`,
  footer: 'Entorno de pruebas: no se contacta con ningún banco real.',
  expiredTitle: 'Enlace caducado',
  expiredHeading: 'Este enlace ha caducado',
  expiredLead:
    'Este enlace de verificación ya se usó o es demasiado antiguo. Vuelve al comercio y empieza la verificación de nuevo.',
  unknownTitle: 'Enlace no válido',
  unknownHeading: 'Este enlace no es válido',
  unknownLead: 'Vuelve al comercio y empieza la verificación de nuevo.',
  doneTitle: 'Listo',
  doneHeading: 'Has terminado',
  doneLead: 'Puedes cerrar esta ventana y volver al comercio.',
};

/** The words for a verification's `transaction.language` (English when it has none, or one not built in). */
export function bankPageText(language: string | undefined): BankPageText {
  return language && /^es(-|$)/i.test(language) ? es : en;
}
