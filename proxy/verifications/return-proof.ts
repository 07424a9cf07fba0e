// The return proof of a bound bank step (bank-step.ts; docs/PROXY.md "Security notes"): a one-time random
// value put in the session's returnURL, which only the provider gets (endpoint 2, server to server), and
// the bank's redirect hands to the browser that signed in. The proxy shows it to no one: not in the
// start's answer, not in any page, log line or event; the session keeps its SHA-256. Like OAuth's PKCE
// verifier it is worth something only together with the other half, the starting browser's binding
// cookie: the browser that carries both came back from the bank *and* started the session, so its page
// may show the account at once. Without the cookie the proof changes nothing (the victim's browser
// carries it and is "completed elsewhere"); without the proof the cookie is what it always was.
//
// In the URL's query, beside `?lang=` (docs/UPSTREAM.md D9): a query never reaches a log line here
// (common/ids.ts `pathForLog`), and the return page's relative paths stay as they are.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SessionRecord } from '../storage/sessions.ts';

/** The query parameter that carries the proof. */
export const RETURN_PROOF_PARAM = 'proof';

/** 32 random bytes, base64url. */
const PROOF_PATTERN = /^[A-Za-z0-9_-]{43}$/;

function digest(proof: string): string {
  return createHash('sha256').update(proof).digest('base64url');
}

/** A new proof for a session's returnURL, and what its record keeps of it (`returnProof`). */
export function newReturnProof(): { proof: string; digest: string } {
  const proof = randomBytes(32).toString('base64url');
  return { proof, digest: digest(proof) };
}

/**
 * Whether `given` (the return URL's `proof`, as the request carries it) is `record`'s proof; constant-time
 * over the digests. A session started before proofs existed has none: nothing proves its return, so it
 * keeps the rule it was started under (bank-step.ts: a return with the cookie counts after the grace).
 */
export function provesReturn(record: Pick<SessionRecord, 'returnProof'>, given: unknown): boolean {
  if (record.returnProof === undefined) return false;
  if (typeof given !== 'string' || !PROOF_PATTERN.test(given)) return false;
  const expected = Buffer.from(record.returnProof);
  const actual = Buffer.from(digest(given));
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
