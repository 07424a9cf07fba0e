// Link sessions: the merchant's server says, server to server, who is paying for what (user, order,
// amount, consumer, language), and gets an opaque, short-lived link token for the page. A start made with
// the token uses these values alone (verifications/start.ts). The token is for one purchase: it starts
// verifications (a retry after a failure, a "Change" of account) until its order is paid, then nothing
// more. Only a hash of the token is stored, so nothing read out of the store (a Redis dump, a key
// listing) can start a verification.
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { problem } from '../common/errors.ts';
import { MAX_USES_PER_LINK_SESSION, RECORD_GRACE_MS } from '../config/limits.ts';
import { readPayment } from '../payments/orders.ts';
import { Amount, CurrencyCode, LanguageTag, text } from '../common/validation.ts';
import { openOfferedAccounts, refuseRemoved, SavedAccountFields, StoredSavedAccountFields } from '../accounts/offer.ts';
import { checkCompletionUri, HostedRequest, hostedUrl, linkTokenOfHostedRef, newHostedRef } from './hosted.ts';


/** What the merchant's server sends to POST /link-sessions (CONTRACTS §3). Unknown fields are refused. */
export const CreateLinkSessionBody = z.strictObject({
  merchantUserId: text(100),
  merchantTransactionId: text(100),
  amount: Amount,
  currency: CurrencyCode,
  consumer: z.strictObject({
    firstName: text(100),
    lastName: text(100),
    email: z.email('must be an e-mail address').max(254),
  }),
  /** The shopper's language: the bank's page, the return page and the shopper words follow it. */
  language: LanguageTag.max(35).optional(),
  dataPassThrough: z.string().max(1000).optional(),
  /** Returning shoppers (accounts/offer.ts): saved accounts to offer, saving allowed, an account to re-authorize. */
  ...SavedAccountFields,
  /** A hosted page for this link session (link-sessions/hosted.ts): the answer then carries its `hostedUrl`. */
  hosted: HostedRequest.optional(),
});
export type CreateLinkSessionBody = z.infer<typeof CreateLinkSessionBody>;

/** A link session as stored, and as a start reads it back (parsed: another instance wrote it). */
const StoredLinkSession = CreateLinkSessionBody.extend({ ...StoredSavedAccountFields, createdAt: z.number(), expiresAt: z.number() });
export type LinkSession = z.infer<typeof StoredLinkSession>;

/** What POST /link-sessions answers. */
export interface CreatedLinkSession {
  linkToken: string;
  /** ISO 8601. */
  expiresAt: string;
  /** With `hosted`: the page to open or send the shopper (as long as the link token lives; no token in it). */
  hostedUrl?: string;
}

/** The id a link session is stored and referred to under: a hash of its token, never the token. */
export function linkSessionId(linkToken: string): string {
  return createHash('sha256').update(linkToken).digest('base64url');
}

export async function createLinkSession(ctx: ProxyContext, input: CreateLinkSessionBody): Promise<CreatedLinkSession> {
  if (input.hosted) checkCompletionUri(ctx.config, input.hosted.completionRedirectUri);
  // A hosted page's link token is derived from its reference (hosted.ts), so the page can hand it to its element.
  const hostedRef = input.hosted ? newHostedRef() : undefined;
  const linkToken = hostedRef ? linkTokenOfHostedRef(hostedRef) : `lt_${randomBytes(24).toString('base64url')}`;
  const { savedAccounts, reauthorize, ...purchase } = input;
  // Opened now, so a saved account that is not this user's is refused to the server, never offered.
  const offered = openOfferedAccounts(ctx, input.merchantUserId, { savedAccounts, reauthorize });
  await refuseRemoved(ctx, input.merchantUserId, offered);
  const now = ctx.now();
  const session: LinkSession = { ...purchase, ...offered, createdAt: now, expiresAt: now + ctx.config.linkSessionTtlMs };
  // Kept past its expiry for the grace period, so a late start hears "expired" rather than "unknown".
  await ctx.linkSessions.create(linkSessionId(linkToken), session, ctx.config.linkSessionTtlMs + RECORD_GRACE_MS);
  return { linkToken, expiresAt: new Date(session.expiresAt).toISOString(), ...(hostedRef ? { hostedUrl: hostedUrl(ctx.config, hostedRef) } : {}) };
}

const refused = (slug: 'unknown-link-token' | 'link-token-expired' | 'link-token-used', detail: string, message: string) =>
  problem(slug, detail, { errors: [{ path: 'linkToken', message }] });

/** The link session a start may use: 404 unknown, 410 expired, 409 its order is paid (or being paid). */
export async function resolveLinkSession(ctx: ProxyContext, linkToken: string): Promise<{ id: string; session: LinkSession }> {
  const id = linkSessionId(linkToken);
  const stored = await ctx.linkSessions.get(id);
  const parsed = stored === undefined ? undefined : StoredLinkSession.safeParse(stored);
  if (!parsed?.success) {
    throw refused('unknown-link-token', 'No link session has this token: the merchant\'s server creates one per checkout (POST /link-sessions).', 'is not a known link token');
  }
  const session = parsed.data;
  if (session.expiresAt <= ctx.now()) {
    throw refused('link-token-expired', 'This link token has expired: the merchant\'s server creates a new link session.', 'has expired');
  }
  if ((await readPayment(ctx, session.merchantTransactionId)) !== undefined) {
    throw refused('link-token-used', 'The order of this link token has been paid; a link token is for one purchase.', 'has already been used');
  }
  return { id, session };
}

/**
 * Counts one use of the link session (a start, a saved account chosen): 429 naming `linkToken` once it has
 * had MAX_USES_PER_LINK_SESSION, so one token cannot make sessions, events and upstream calls without end.
 */
export async function spendLinkSession(ctx: Pick<ProxyContext, 'linkSessions'>, id: string): Promise<void> {
  if (!(await ctx.linkSessions.use(id, MAX_USES_PER_LINK_SESSION))) {
    throw problem('link-token-exhausted', `This link token has started ${MAX_USES_PER_LINK_SESSION} verifications or choices: the merchant's server creates a new link session.`,
      { errors: [{ path: 'linkToken', message: 'has been used too many times' }] });
  }
}
