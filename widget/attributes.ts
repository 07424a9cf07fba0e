// Checks of the attributes a merchant writes by hand. A typo must show up as a visible configuration
// error, not as a button that silently does nothing or a request the proxy rejects later.
import type { ObvStrings } from './strings.ts';

/** The attributes that can make the element unusable. */
export interface ObvConfig {
  proxyUrl: string;
  amount?: string | undefined;
  currency?: string | undefined;
  consumerEmail?: string | undefined;
}

/** Positive decimal with at most two places; no sign, exponent or leading zeros ("49.99", "5", "0.5"; not "0"). */
const AMOUNT = /^(?!0(\.0+)?$)(0|[1-9]\d{0,11})(\.\d{1,2})?$/;

/** Only catches what is clearly not an address ("ana", "ana@shop"); the proxy checks the rest. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Resolves `proxy-url` against the page; `undefined` unless it is an http(s) URL. */
export function resolveProxyUrl(proxyUrl: string, base: string = document.baseURI): URL | undefined {
  try {
    const url = new URL(proxyUrl, base);
    return proxyUrl.trim() && /^https?:$/.test(url.protocol) ? url : undefined;
  } catch {
    return undefined;
  }
}

/** The message for the first wrong attribute, or `undefined` when the configuration is usable. */
export function findConfigProblem(config: ObvConfig, strings: ObvStrings): string | undefined {
  if (!resolveProxyUrl(config.proxyUrl)) return strings.invalidProxyUrl;
  if (config.amount != null && !AMOUNT.test(config.amount)) return strings.invalidAmount;
  // The spec's transactions are in US dollars only.
  if (config.currency != null && config.currency !== 'USD') return strings.invalidCurrency;
  // Blank counts as unset: the element then sends no e-mail at all.
  const email = config.consumerEmail?.trim();
  if (email && !EMAIL.test(email)) return strings.invalidEmail;
  return undefined;
}
