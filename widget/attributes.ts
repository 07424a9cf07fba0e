// Checks of the attributes a merchant writes by hand. A typo must show up as a visible configuration
// error, not as a button that silently does nothing or a request the proxy rejects later.
import type { ObvStrings } from './strings.ts';

/** The attributes that can make the element unusable. */
export interface ObvConfig {
  proxyUrl: string;
  amount?: string | undefined;
  currency?: string | undefined;
}

/** One attribute that is wrong, with a message for people. */
export interface ConfigProblem {
  attribute: 'proxy-url' | 'amount' | 'currency';
  message: string;
}

/** Positive decimal with at most two places; no sign, exponent or leading zeros ("49.99", "5", "0.5"). */
const AMOUNT = /^(?:0|[1-9]\d{0,11})(?:\.\d{1,2})?$/;

/** The spec's transactions are in US dollars only. */
export const SUPPORTED_CURRENCIES: readonly string[] = ['USD'];

/** Resolves `proxy-url` against the page; `undefined` unless it is an http(s) URL. */
export function resolveProxyUrl(proxyUrl: string, base: string = document.baseURI): URL | undefined {
  if (proxyUrl.trim() === '') return undefined;
  try {
    const url = new URL(proxyUrl, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** The first wrong attribute, or `undefined` when the configuration is usable. */
export function findConfigProblem(config: ObvConfig, strings: ObvStrings): ConfigProblem | undefined {
  if (!resolveProxyUrl(config.proxyUrl)) {
    return { attribute: 'proxy-url', message: strings.invalidProxyUrl };
  }
  if (config.amount != null && (!AMOUNT.test(config.amount) || Number(config.amount) <= 0)) {
    return { attribute: 'amount', message: strings.invalidAmount };
  }
  if (config.currency != null && !SUPPORTED_CURRENCIES.includes(config.currency)) {
    return { attribute: 'currency', message: strings.invalidCurrency };
  }
  return undefined;
}
