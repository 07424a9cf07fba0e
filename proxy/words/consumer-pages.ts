// The words of the proxy's own pages in the consumer's tab (the holding page and the return page), in
// English and Spanish. The language comes from the page's `?lang=` (the element adds it to the holding
// page; the proxy adds the verification's `transaction.language` to the return URL).

export interface ConsumerPageText {
  lang: 'en' | 'es';
  connectingTitle: string;
  connectingMessage: string;
  /** The holding page's message naming the shop that sent the shopper (`{merchant}`), when it is configured. */
  connectingFromMerchant: string;
  /** Shown once the provider has taken a few seconds: the page is still working. */
  connectingSlow: string;
  /** The holding page's button that closes the tab (the checkout is then in front), and what it says when the browser refuses. */
  backToCheckout: string;
  backRefused: string;
  returnedTitle: string;
  returnedMessage: string;
  cancelledTitle: string;
  cancelledMessage: string;
  unknownTitle: string;
  unknownMessage: string;
  /** OBV_BIND_BANK_STEP: the bank step was completed in a browser other than the one that started; nothing linked. */
  otherBrowserTitle: string;
  otherBrowserMessage: string;
  /** OBV_BIND_BANK_STEP: the starting browser is back, and its return cannot count yet (the page reloads itself). */
  finishingTitle: string;
  finishingMessage: string;
  /** OBV_BIND_BANK_STEP: a browser without the binding, after the starting browser confirmed the step. */
  finishedElsewhereTitle: string;
  finishedElsewhereMessage: string;
  /** OBV_BIND_BANK_STEP: the session's time ran out before its bank step was confirmed. */
  expiredTitle: string;
  expiredMessage: string;
}

const en: ConsumerPageText = {
  lang: 'en',
  connectingTitle: 'Connecting to your bank…',
  connectingMessage: 'Your bank’s page opens here in a moment.',
  connectingFromMerchant:
    '{merchant} is sending you to your bank to link your account. Your bank’s page opens here in a moment.',
  connectingSlow: 'Still connecting. Your bank can take up to 20 seconds to answer.',
  backToCheckout: 'Back to checkout',
  backRefused: 'Close this tab to go back to the checkout.',
  returnedTitle: 'Bank step complete — you can close this tab',
  returnedMessage: 'Return to the checkout to continue.',
  cancelledTitle: 'Bank linking was cancelled',
  cancelledMessage: 'You cancelled this at the checkout, so no account was linked. You can close this tab.',
  unknownTitle: 'Link not recognized',
  unknownMessage: 'This verification is not known here. You can close this tab.',
  otherBrowserTitle: 'Finish in the browser where you started',
  otherBrowserMessage:
    'This bank link was started in one browser and finished in another, so for your safety no account was linked. ' +
    'If you started this payment, go back to the checkout and try again, in the same browser. If you did not start it, close this tab: ' +
    'nothing was linked or paid.',
  finishingTitle: 'Finishing your bank step…',
  finishingMessage: 'Keep this tab open: this takes a few seconds.',
  finishedElsewhereTitle: 'This bank link was finished in another browser',
  finishedElsewhereMessage:
    'Nothing more happens here. If you did not start a payment, close this tab and tell your bank.',
  expiredTitle: 'This bank link has expired',
  expiredMessage: 'No account was linked. Go back to the checkout to start again.',
};

const es: ConsumerPageText = {
  lang: 'es',
  connectingTitle: 'Conectando con tu banco…',
  connectingMessage: 'La página de tu banco se abrirá aquí en un momento.',
  connectingFromMerchant:
    '{merchant} te lleva a tu banco para vincular tu cuenta. La página de tu banco se abrirá aquí en un momento.',
  connectingSlow: 'Seguimos conectando. Tu banco puede tardar hasta 20 segundos en responder.',
  backToCheckout: 'Volver al pago',
  backRefused: 'Cierra esta pestaña para volver a la página de pago.',
  returnedTitle: 'Paso del banco completado: puedes cerrar esta pestaña',
  returnedMessage: 'Vuelve al pago para continuar.',
  cancelledTitle: 'Se canceló la vinculación bancaria',
  cancelledMessage:
    'La cancelaste en la página de pago, así que no se vinculó ninguna cuenta. Puedes cerrar esta pestaña.',
  unknownTitle: 'Enlace no reconocido',
  unknownMessage: 'Esta verificación no se conoce aquí. Puedes cerrar esta pestaña.',
  otherBrowserTitle: 'Termina en el navegador donde empezaste',
  otherBrowserMessage:
    'Esta vinculación bancaria se inició en un navegador y se terminó en otro, así que por tu seguridad no se vinculó ' +
    'ninguna cuenta. Si iniciaste este pago, vuelve a la página de pago e inténtalo de nuevo en el mismo navegador. Si no lo iniciaste tú, ' +
    'cierra esta pestaña: no se vinculó ni se pagó nada.',
  finishingTitle: 'Terminando el paso del banco…',
  finishingMessage: 'Mantén esta pestaña abierta: tarda unos segundos.',
  finishedElsewhereTitle: 'Esta vinculación bancaria se terminó en otro navegador',
  finishedElsewhereMessage:
    'Aquí no pasa nada más. Si no iniciaste ningún pago, cierra esta pestaña y avisa a tu banco.',
  expiredTitle: 'Esta vinculación bancaria caducó',
  expiredMessage: 'No se vinculó ninguna cuenta. Vuelve a la página de pago para empezar de nuevo.',
};

/** The texts for a language tag or a `?lang=` value ("es", "es-MX"…); anything else gets English. */
export function consumerPageText(language: unknown): ConsumerPageText {
  return typeof language === 'string' && /^es(-|$)/i.test(language) ? es : en;
}
