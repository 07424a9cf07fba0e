// The words a shopper agrees to when saving an account (the debit authorization), in English and
// Spanish, and the record of that agreement the merchant's server receives. The element shows the
// words the proxy sends it (never words of its own), so the record holds exactly what was on screen.
import { isIP, SocketAddress } from 'node:net';
import { shopperLanguage } from '../words/outcomes.ts';

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

const WORDS: Record<'en' | 'es', Words> = {
  en: (merchant) => ({
    checkbox: 'Save this account for my next purchases',
    text: `You authorize ${merchant ?? 'this store'} to debit this bank account for the total of each future purchase you confirm at its checkout.`,
    more: 'How it works',
    details: 'Nothing is debited without your confirmation. You can remove the saved account at any time: choose “Remove” next to it at checkout, '
      + `or ask ${merchant ?? 'the store'} to remove it.`,
  }),
  es: (merchant) => ({
    checkbox: 'Guardar esta cuenta para mis próximas compras',
    text: `Autorizas a ${merchant ?? 'esta tienda'} a cargar en esta cuenta bancaria el total de cada compra futura que confirmes en su página de pago.`,
    more: 'Cómo funciona',
    details: 'No se carga nada sin tu confirmación. Puedes eliminar la cuenta guardada cuando quieras: elige «Eliminar» junto a ella al pagar, '
      + `o pide a ${merchant ?? 'la tienda'} que la elimine.`,
  }),
};

/**
 * The consent words in the shopper's language (English unless it is Spanish), naming the store
 * (`merchantName`, OBV_MERCHANT_NAME) when it is configured.
 */
export function consentWords(language: string | undefined, merchantName?: string): ConsentWords {
  const lang = shopperLanguage(language);
  return { version: CONSENT_VERSION, lang, ...WORDS[lang](merchantName || undefined) };
}

/** The longest user agent a consent record keeps, in characters (a real browser's is well under 200). */
export const CONSENT_USER_AGENT_MAX = 256;

/**
 * The request's address as a consent record keeps it: what node:net parses as an IP address, in its
 * canonical form (IPv6 compressed and lower case, an IPv4-mapped address as IPv4, no zone); '' for
 * anything else. Behind OBV_TRUST_PROXY the address is the client's X-Forwarded-For entry, which a
 * client writes as it likes.
 */
export function consentAddress(address: string | undefined): string {
  const family = address ? isIP(address) : 0;
  if (!address || family === 0) return '';
  const canonical = new SocketAddress({ address, family: family === 4 ? 'ipv4' : 'ipv6' }).address;
  return canonical.startsWith('::ffff:') && isIP(canonical.slice(7)) === 4 ? canonical.slice(7) : canonical;
}

/** Control, format (bidi overrides, zero-width) and line/paragraph separator characters. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * The request's User-Agent as a consent record keeps it: unprintable characters removed (a tab or
 * line break becomes a space), whitespace runs made one space, at most CONSENT_USER_AGENT_MAX
 * characters (never half of a surrogate pair). It is the client's own text: a record, not a fact.
 */
export function consentUserAgent(userAgent: string | undefined): string {
  const printable = (userAgent ?? '').replace(/[\t\n\r\v\f]/g, ' ').replace(UNPRINTABLE, '').replace(/\s+/g, ' ').trim();
  return Array.from(printable).slice(0, CONSENT_USER_AGENT_MAX).join('').trimEnd();
}

/**
 * The record of a shopper's consent to save an account: the exact words shown and their version, when,
 * and from where (the IP address and user agent of the request that started the linking).
 */
export interface ConsentRecord {
  version: string;
  lang: 'en' | 'es';
  /** The checkbox's label and the whole authorization (`text`, then `details`), exactly as shown. */
  checkbox: string;
  text: string;
  /** ISO 8601. */
  acceptedAt: string;
  /** The starting request's client address, canonical (`consentAddress`); '' when it was not an IP address. */
  ip: string;
  /** The starting request's User-Agent, printable and at most CONSENT_USER_AGENT_MAX characters (`consentUserAgent`). */
  userAgent: string;
}
