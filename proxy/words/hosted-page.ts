// The words of the hosted link page (routes/hosted-page.ts) around the element, in English and Spanish:
// the link session's `language` picks them (the element and the bank follow the same language). The
// element's own words ship in its bundle (widget/strings.ts); these are the proxy's, so they cost the
// bundle nothing.

export interface HostedPageText {
  lang: 'en' | 'es';
  /** The page's title and heading. */
  title: string;
  /** Above the heading: who asks (`{merchant}`). */
  fromMerchant: string;
  /** Without OBV_MERCHANT_NAME. */
  fromShop: string;
  amountLabel: string;
  /** Whose order it is (`{consumer}`: the declared consumer, masked), shown before the bank step: a forwarded link says so. */
  orderFor: string;
  /** Under it: what to do when it is not the reader's. */
  notYours: string;
  /** Confirms the saved account the element has ready. */
  continueWithAccount: string;
  /** Under the element: what linking does and does not do. */
  explainer: string;
  /** Shown once the flow ended, whether or not the redirect opened. */
  doneTitle: string;
  doneMessage: string;
  /** Instead of doneMessage when the page is opened again after linking: nothing navigates by itself. */
  alreadyMessage: string;
  /** What happened, on the closing panel. */
  outcomes: Record<'linked' | 'failed' | 'cancelled' | 'expired', string>;
  returnToApp: string;
  unknownTitle: string;
  unknownMessage: string;
  expiredTitle: string;
  expiredMessage: string;
  usedTitle: string;
  usedMessage: string;
  unavailableTitle: string;
  unavailableMessage: string;
}

const en: HostedPageText = {
  lang: 'en',
  title: 'Link your bank account',
  fromMerchant: '{merchant} asks you to link a bank account',
  fromShop: 'Your shop asks you to link a bank account',
  amountLabel: 'Amount',
  orderFor: 'Order for {consumer}',
  notYours: "Not you? Close this page: this link is for that person's order only.",
  continueWithAccount: 'Continue with this account',
  explainer: 'Linking does not pay anything: the shop charges the amount after you link an account.',
  doneTitle: 'You can close this page',
  doneMessage: 'We are taking you back. If nothing happens, return to the app yourself.',
  alreadyMessage: 'This link is done. Return to the app to continue.',
  outcomes: {
    linked: 'Your bank account is linked.',
    failed: 'No account was linked.',
    cancelled: 'Linking was cancelled: no account was linked.',
    expired: 'This bank link expired: no account was linked.',
  },
  returnToApp: 'Return to the app',
  unknownTitle: 'Link not recognized',
  unknownMessage: 'This bank link is not known here. Ask the shop for a new one. You can close this page.',
  expiredTitle: 'This bank link has expired',
  expiredMessage: 'No account was linked. Ask the shop for a new link. You can close this page.',
  usedTitle: 'This bank link has been used',
  usedMessage: 'The payment it was for is done. You can close this page.',
  unavailableTitle: 'Bank linking is not available',
  unavailableMessage: 'Please try again later. You can close this page.',
};

const es: HostedPageText = {
  lang: 'es',
  title: 'Vincula tu cuenta bancaria',
  fromMerchant: '{merchant} te pide vincular una cuenta bancaria',
  fromShop: 'Tu tienda te pide vincular una cuenta bancaria',
  amountLabel: 'Importe',
  orderFor: 'Pedido de {consumer}',
  notYours: '¿No eres tú? Cierra esta página: este enlace es solo para el pedido de esa persona.',
  continueWithAccount: 'Continuar con esta cuenta',
  explainer: 'Vincular no paga nada: la tienda cobra el importe después de que vincules una cuenta.',
  doneTitle: 'Puedes cerrar esta página',
  doneMessage: 'Te estamos llevando de vuelta. Si no pasa nada, vuelve tú a la aplicación.',
  alreadyMessage: 'Este enlace ya se usó. Vuelve a la aplicación para continuar.',
  outcomes: {
    linked: 'Tu cuenta bancaria está vinculada.',
    failed: 'No se vinculó ninguna cuenta.',
    cancelled: 'Se canceló la vinculación: no se vinculó ninguna cuenta.',
    expired: 'Este enlace bancario caducó: no se vinculó ninguna cuenta.',
  },
  returnToApp: 'Volver a la aplicación',
  unknownTitle: 'Enlace no reconocido',
  unknownMessage: 'Este enlace bancario no se conoce aquí. Pide uno nuevo a la tienda. Puedes cerrar esta página.',
  expiredTitle: 'Este enlace bancario caducó',
  expiredMessage: 'No se vinculó ninguna cuenta. Pide un enlace nuevo a la tienda. Puedes cerrar esta página.',
  usedTitle: 'Este enlace bancario ya se usó',
  usedMessage: 'El pago para el que era ya está hecho. Puedes cerrar esta página.',
  unavailableTitle: 'La vinculación bancaria no está disponible',
  unavailableMessage: 'Inténtalo de nuevo más tarde. Puedes cerrar esta página.',
};

/** The texts for a language tag ("es", "es-MX"…); anything else gets English. */
export function hostedPageText(language: string | undefined): HostedPageText {
  return typeof language === 'string' && /^es(-|$)/i.test(language) ? es : en;
}
