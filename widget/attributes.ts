// The attributes a merchant writes by hand: their checks, and the start they make. A typo must show up as
// a visible configuration error, not as a button that silently does nothing or a request the proxy
// rejects later. The messages are for the developer (the `obv-error` detail and the console), so they
// are English only; the shopper sees "Bank linking is not available" in their language.
//
// Nothing about the shopper or the purchase comes from the page: the merchant's server names them in a
// link session (or, in a Node app that mounts the proxy, in its `enrichStart` hook), and the page carries
// only the link token.
import { LINK_TOKEN_PATTERN } from '../contracts/link-token.ts';
import type { FlowTarget } from './link-flow.ts';
import { pendingKey } from './pending-session.ts';
import type { StartRequest } from './session-client.ts';

/** The attributes a start sends or depends on. */
export interface ObvAttributes {
  proxyUrl: string;
  /** The merchant server's link session for this checkout. */
  linkToken?: string | undefined;
  /** The form field name: part of where a pending session is kept across a reload. */
  name: string;
}

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
export function findConfigProblem(attributes: ObvAttributes): string | undefined {
  if (!resolveProxyUrl(attributes.proxyUrl)) return 'proxy-url must be an http(s) URL or a path';
  if (attributes.linkToken != null && !LINK_TOKEN_PATTERN.test(attributes.linkToken))
    return 'link-token must be a linkToken from POST /link-sessions';
  return undefined;
}

/**
 * The start request: the link token alone (the link session is the server's word on the purchase and the
 * shopper's language), or, without one, only the element's language for the proxy's `enrichStart` hook.
 */
export function startRequest(linkToken: string | undefined, language: string | undefined): StartRequest {
  return linkToken ? { linkToken } : language ? { language } : {};
}

/** What the flow needs from the element (link-flow.ts); `undefined` while `proxy-url` is unusable. */
export function flowTarget(
  attributes: ObvAttributes,
  language: string | undefined,
  tabOpener: () => Window | undefined,
): FlowTarget | undefined {
  const base = resolveProxyUrl(attributes.proxyUrl);
  if (!base) return undefined;
  const { linkToken } = attributes;
  return {
    base,
    storageKey: pendingKey(attributes.name, base),
    // A reload resumes a pending session only for the same link session (its token's tail: the whole
    // token need not sit in storage).
    purchase: linkToken ? `link …${linkToken.slice(-8)}` : '',
    language,
    tabOpener,
    request: startRequest(linkToken, language),
  };
}
