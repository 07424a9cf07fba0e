// The record of a shopper's consent to save an account (storage/saved-accounts.ts `ConsentRecord`): the
// request's address and user agent as the record keeps them. The words agreed to are words/consent.ts's.
import { isIP, SocketAddress } from 'node:net';

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
  const printable = (userAgent ?? '')
    .replace(/[\t\n\r\v\f]/g, ' ')
    .replace(UNPRINTABLE, '')
    .replace(/\s+/g, ' ')
    .trim();
  return Array.from(printable).slice(0, CONSENT_USER_AGENT_MAX).join('').trimEnd();
}
