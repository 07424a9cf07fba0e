// The element's words for a returning shopper (the saved-account list, Remove, its confirmation and its announcement,
// Reconnect), in the link session's language, English or Spanish. Sent with the offer rather than built
// into the element, like the outcome words (words/outcomes.ts): every word in the element's
// bundle costs every merchant's shoppers bytes, and only returning shoppers need these.
import { shopperLanguage } from './outcomes.ts';

export interface OfferWords {
  /** The language the words are written in. */
  lang: 'en' | 'es';
  /** The list's title (and the radio group's name). */
  title: string;
  useAnother: string;
  /** The button back to the list (from "Use another account" or the reconnect screen): short, one line on a 320 px phone. */
  useSaved: string;
  remove: string;
  /** The in-element confirmation; `{account}` is the account's bank and line. */
  removeConfirm: string;
  /** Said (and shown) once the account is removed; `{account}` as above. */
  removed: string;
  keep: string;
  /** "Reconnect" before the bank's name and the account's masked number; the button says it alone. */
  reconnect: string;
  /** Under the Reconnect title: a reconnect follows a payment refused as stale, so it first says nothing was charged. */
  reconnectHint: string;
  /** Under the list, when choosing a saved account failed offline (the element uses it by itself once back online). */
  offline: string;
  /** Under the list, when the proxy's rate limit refused the choice (429). */
  busy: string;
  /** Under the list, when the proxy could not make the choice (5xx, or out of reach while online). */
  down: string;
}

const WORDS: Record<'en' | 'es', Omit<OfferWords, 'lang'>> = {
  en: {
    title: 'Pay with a saved account',
    useAnother: 'Use another account',
    useSaved: 'Use a saved account',
    remove: 'Remove',
    removeConfirm: 'Remove {account} from your saved accounts?',
    removed: '{account} was removed from your saved accounts.',
    keep: 'Keep',
    reconnect: 'Reconnect',
    reconnectHint: 'Nothing was charged: your bank asks you to sign in again before this account can be used.',
    offline: 'You’re offline. This account is used as soon as you’re back online.',
    busy: 'Too many changes in a short time. Wait a moment, then try again.',
    down: 'We couldn’t use this account just now. Try again in a moment.',
  },
  es: {
    title: 'Paga con una cuenta guardada',
    useAnother: 'Usar otra cuenta',
    useSaved: 'Usar una cuenta guardada',
    remove: 'Eliminar',
    removeConfirm: '¿Eliminar {account} de tus cuentas guardadas?',
    removed: 'Se eliminó {account} de tus cuentas guardadas.',
    keep: 'Conservar',
    reconnect: 'Reconectar',
    reconnectHint: 'No se cobró nada: tu banco te pide que inicies sesión de nuevo para usar esta cuenta.',
    offline: 'No tienes conexión. Esta cuenta se usará en cuanto vuelvas a estar en línea.',
    busy: 'Demasiados cambios en poco tiempo. Espera un momento y vuelve a intentarlo.',
    down: 'No pudimos usar esta cuenta ahora. Inténtalo de nuevo en un momento.',
  },
};

export function offerWords(language: string | undefined): OfferWords {
  const lang = shopperLanguage(language);
  return { lang, ...WORDS[lang] };
}
