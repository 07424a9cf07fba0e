// The attributes a merchant writes by hand: their checks, and the start they make. A typo must show up as
// a visible configuration error, not as a button that silently does nothing or a request the proxy
// rejects later. The messages are for the developer (the `obv-error` detail and the console), so they
// are English only; the shopper sees "Bank linking is not available" in their language.
import { AMOUNT_MESSAGE, isAmount } from '../contracts/amount.ts';
import type { FlowTarget } from './link-flow.ts';
import { pendingKey } from './pending-session.ts';
import type { StartRequest } from './session-client.ts';

/** The attributes that can make the element unusable. */
export interface ObvConfig {
  proxyUrl: string;
  /** The merchant server's link session for this checkout: the proxy then takes the purchase from it alone. */
  linkToken?: string | undefined;
  merchantUserId?: string | undefined;
  merchantTransactionId?: string | undefined;
  amount?: string | undefined;
  currency?: string | undefined;
  consumerEmail?: string | undefined;
  consumerFirstName?: string | undefined;
  consumerLastName?: string | undefined;
}

/** The attributes a start sends or depends on. */
export interface ObvAttributes extends ObvConfig {
  name: string;
  linkRef?: string | undefined;
}

/** What POST /link-sessions answers as `linkToken`. */
const LINK_TOKEN = /^lt_[A-Za-z0-9_-]{32}$/;

/** The attributes a link session replaces (the proxy refuses them beside a link token), as properties. */
const PAGE_PURCHASE = ['merchantUserId', 'merchantTransactionId', 'amount', 'currency', 'consumerFirstName', 'consumerLastName', 'consumerEmail'] as const;

/** `merchantUserId` → `merchant-user-id`: the attribute a merchant wrote. */
const attributeName = (property: string) => property.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

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

/** The developer's message for the first wrong attribute, or `undefined` when the configuration is usable. */
export function findConfigProblem(config: ObvConfig): string | undefined {
  if (!resolveProxyUrl(config.proxyUrl)) return 'proxy-url must be an http(s) URL or a path';
  if (config.linkToken != null) {
    if (!LINK_TOKEN.test(config.linkToken)) return 'link-token must be a linkToken from POST /link-sessions';
    const extra = PAGE_PURCHASE.filter((key) => config[key] != null);
    if (extra.length) return `link-token is set: remove ${extra.map(attributeName).join(', ')} (the link session sets them)`;
  }
  if (config.amount != null && !isAmount(config.amount)) return `amount ${AMOUNT_MESSAGE}`;
  // The provider verifies US accounts only (docs/UPSTREAM.md#d8-amount-and-currency).
  if (config.currency != null && config.currency !== 'USD') return 'currency must be USD';
  // Blank counts as unset: the element then sends no e-mail at all.
  const email = config.consumerEmail?.trim();
  if (email && !EMAIL.test(email)) return 'consumer-email must be an e-mail address';
  return undefined;
}

/** The start request the attributes make: blank ones are left out (the proxy rejects an empty field but fills a missing one from its hook). */
export function startRequest(attributes: ObvAttributes, language: string | undefined): StartRequest {
  // The link session is the server's word on the purchase and the shopper's language: nothing else is sent.
  if (attributes.linkToken) return { linkToken: attributes.linkToken };
  const body: StartRequest = {};
  for (const key of ['merchantUserId', 'merchantTransactionId', 'amount', 'currency', 'linkRef'] as const) {
    if (attributes[key]) body[key] = attributes[key];
  }
  if (language) body.language = language;
  const consumer: Record<string, string> = {};
  const { consumerFirstName: firstName, consumerLastName: lastName, consumerEmail: email } = attributes;
  for (const [key, value] of Object.entries({ firstName, lastName, email })) {
    const trimmed = value?.trim();
    if (trimmed) consumer[key] = trimmed;
  }
  if (Object.keys(consumer).length) body.consumer = consumer;
  return body;
}

/** What the flow needs from the element (link-flow.ts); `undefined` while `proxy-url` is unusable. */
export function flowTarget(attributes: ObvAttributes, language: string | undefined, tabOpener: () => Window | undefined): FlowTarget | undefined {
  const base = resolveProxyUrl(attributes.proxyUrl);
  if (!base) return undefined;
  return {
    base,
    storageKey: pendingKey(attributes.name, base),
    // A reload resumes a pending session only for the same order and amount.
    purchase: attributes.linkToken ? `link …${attributes.linkToken.slice(-8)}` : `${attributes.merchantTransactionId} ${attributes.amount}`,
    language,
    tabOpener,
    request: startRequest(attributes, language),
  };
}
