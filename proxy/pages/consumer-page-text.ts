// The words of the proxy's own pages in the consumer's tab (the holding page and the return page), in
// English and Spanish. The language comes from the page's `?lang=` (the element adds it to the holding
// page; the proxy adds the verification's `transaction.language` to the return URL).

export interface ConsumerPageText {
  lang: 'en' | 'es';
  connectingTitle: string;
  connectingMessage: string;
  /** The holding page's message naming the shop that sent the shopper (`{merchant}`), when it is configured. */
  connectingFromMerchant: string;
  returnedTitle: string;
  returnedMessage: string;
  cancelledTitle: string;
  cancelledMessage: string;
  unknownTitle: string;
  unknownMessage: string;
  otherBrowserTitle: string;
  otherBrowserMessage: string;
}

const en: ConsumerPageText = {
  lang: 'en',
  connectingTitle: 'Connecting to your bank…',
  connectingMessage: 'Your bank’s page opens here in a moment.',
  connectingFromMerchant: '{merchant} is sending you to your bank to link your account. Your bank’s page opens here in a moment.',
  returnedTitle: 'Bank step complete — you can close this tab',
  returnedMessage: 'Return to the checkout to continue.',
  cancelledTitle: 'Bank linking was cancelled',
  cancelledMessage: 'You cancelled this at the checkout, so no account was linked. You can close this tab.',
  unknownTitle: 'Link not recognised',
  unknownMessage: 'This verification is not known here. You can close this tab.',
  otherBrowserTitle: 'Finish in the browser where you started',
  otherBrowserMessage: 'This bank link was started in another browser or on another device, so for your safety no account was linked. '
    + 'Go back to the checkout where you started and link your account there. If you did not start it, close this tab: nothing was linked or paid.',
};

const es: ConsumerPageText = {
  lang: 'es',
  connectingTitle: 'Conectando con tu banco…',
  connectingMessage: 'La página de tu banco se abrirá aquí en un momento.',
  connectingFromMerchant: '{merchant} te lleva a tu banco para vincular tu cuenta. La página de tu banco se abrirá aquí en un momento.',
  returnedTitle: 'Paso del banco completado: puedes cerrar esta pestaña',
  returnedMessage: 'Vuelve al pago para continuar.',
  cancelledTitle: 'Se canceló la vinculación bancaria',
  cancelledMessage: 'La cancelaste en la página de pago, así que no se vinculó ninguna cuenta. Puedes cerrar esta pestaña.',
  unknownTitle: 'Enlace no reconocido',
  unknownMessage: 'Esta verificación no se conoce aquí. Puedes cerrar esta pestaña.',
  otherBrowserTitle: 'Termina en el navegador donde empezaste',
  otherBrowserMessage: 'Esta vinculación bancaria se inició en otro navegador o en otro dispositivo, así que por tu seguridad no se vinculó '
    + 'ninguna cuenta. Vuelve a la página de pago donde empezaste y vincula tu cuenta allí. Si no la iniciaste tú, cierra esta pestaña: '
    + 'no se vinculó ni se pagó nada.',
};

/** The texts for a language tag or a `?lang=` value ("es", "es-MX"…); anything else gets English. */
export function consumerPageText(language: unknown): ConsumerPageText {
  return typeof language === 'string' && /^es(-|$)/i.test(language) ? es : en;
}
