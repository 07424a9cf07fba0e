// The words a shopper agrees to when saving an account (the debit authorization), in English and
// Spanish. The element shows the words the proxy sends it (never words of its own), so the consent record
// (storage/saved-accounts.ts `ConsentRecord`) holds exactly what was on screen.
import { shopperLanguage } from './outcomes.ts';

/** Bump when any of the words change: a record names the version its shopper saw. */
export const CONSENT_VERSION = '2026-11-26';

/** The consent box's label and the authorization beside it, as the element shows them. */
export interface ConsentWords {
  version: string;
  /** The language the words are written in (the link session's, English or Spanish). */
  lang: 'en' | 'es';
  /** The checkbox's label. (Not `label`: the element's build shortens that name.) */
  checkbox: string;
  /** The debit authorization in one sentence, always shown: who may debit what. */
  text: string;
  /** The summary of the collapsible rest ("How it works"), so the action stays near on a phone. */
  more: string;
  /** The rest of the authorization: nothing without confirmation, how and where to revoke it. */
  details: string;
}

/** The store's name in the words: OBV_MERCHANT_NAME, else a plain "this store". */
type Words = (merchant: string | undefined) => Omit<ConsentWords, 'version' | 'lang'>;

/**
 * Before the authorization on a hosted page (its link can be forwarded): whose purchases the account is
 * saved for, so a person saving an account for someone else's purchases reads so.
 */
const SAVED_FOR: Record<'en' | 'es', (owner: string) => string> = {
  en: (owner) => `The account is saved for ${owner} and pays their future purchases: tick this only if that is you.`,
  es: (owner) => `La cuenta se guarda para ${owner} y paga sus compras futuras: márcalo solo si eres tú.`,
};

const WORDS: Record<'en' | 'es', Words> = {
  en: (merchant) => ({
    checkbox: 'Save this account for my next purchases',
    text: `You authorize ${merchant ?? 'this store'} to debit this bank account for the total of each future purchase you confirm at its checkout.`,
    more: 'How it works',
    details:
      'Nothing is debited without your confirmation. You can remove the saved account at any time: choose “Remove” next to it at checkout, ' +
      `or ask ${merchant ?? 'the store'} to remove it.`,
  }),
  es: (merchant) => ({
    checkbox: 'Guardar esta cuenta para mis próximas compras',
    text: `Autorizas a ${merchant ?? 'esta tienda'} a cargar en esta cuenta bancaria el total de cada compra futura que confirmes en su página de pago.`,
    more: 'Cómo funciona',
    details:
      'No se carga nada sin tu confirmación. Puedes eliminar la cuenta guardada cuando quieras: elige «Eliminar» junto a ella al pagar, ' +
      `o pide a ${merchant ?? 'la tienda'} que la elimine.`,
  }),
};

/**
 * The consent words in the shopper's language (English unless it is Spanish), naming the store
 * (`merchantName`, OBV_MERCHANT_NAME) when it is configured, and on a hosted page whose purchases the
 * account is saved for (`savedFor`: the declared consumer, masked).
 */
export function consentWords(language: string | undefined, merchantName?: string, savedFor?: string): ConsentWords {
  const lang = shopperLanguage(language);
  const words = WORDS[lang](merchantName || undefined);
  return {
    version: CONSENT_VERSION,
    lang,
    ...words,
    ...(savedFor ? { text: `${SAVED_FOR[lang](savedFor)} ${words.text}` } : {}),
  };
}
