// Saved accounts: what a merchant's server keeps in its own database so a returning shopper pays in one
// click. The proxy keeps no database: it seals the account (token, merchant user, display fields, when it
// was linked) into an opaque string with the sealing keys (sealing/sealer.ts), bound to the merchant
// user, and opens it again when the merchant passes it back in a link session. Useless without the
// proxy's key; opens only for the user it was sealed for.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Sealer } from '../sealing/sealer.ts';
import { UnsealError } from '../sealing/sealer.ts';
import type { ConsentRecord } from './consent.ts';
import type { ReconnectResult } from './reconnect.ts';
import { problem } from '../common/errors.ts';
import { describes } from '../common/validation.ts';

/** The sealed string's additional data: a saved account opens only for the merchant user it names. */
const savedAccountContext = (merchantUserId: string) => `saved-account:${merchantUserId}`;

/** What a saved account holds inside its seal (version 1). */
const SealedPayload = z.object({
  v: z.literal(1),
  accountId: z.string(),
  accountToken: z.string(),
  merchantUserId: z.string(),
  accountLabel: z.string(),
  fiName: z.string(),
  fiAccountType: z.string(),
  /** ISO 8601. */
  linkedAt: z.string(),
});
export type SavedAccountPayload = z.infer<typeof SealedPayload>;

/** The display fields every saved account carries in the clear beside its seal. */
export interface SavedAccountDisplay {
  accountLabel: string;
  fiName: string;
  fiAccountType: string;
}

// Each schema is checked against its type at compile time (`describes`): a field added to one alone fails the build.
const ConsentRecordSchema = describes<ConsentRecord>()(z.strictObject({
  version: z.string(),
  lang: z.enum(['en', 'es']),
  checkbox: z.string(),
  text: z.string(),
  acceptedAt: z.string(),
  ip: z.string(),
  userAgent: z.string(),
}));

/** A saved account as stored with a success's outcome (the Redis backend parses what it reads back). */
export const SavedAccountSchema = describes<SavedAccount>()(z.strictObject({
  sealed: z.string(),
  accountId: z.string(),
  accountLabel: z.string(),
  fiName: z.string(),
  fiAccountType: z.string(),
  linkedAt: z.string(),
  consent: ConsentRecordSchema.optional(),
  reauthorized: z.literal(true).optional(),
}));

/** A reconnect's result as stored with a success's outcome and sent to the merchant (reconnect.ts). */
export const ReconnectResultSchema = describes<ReconnectResult>()(z.strictObject({
  accountId: z.string().meta({ description: 'The saved account the link session re-authorized' }),
  differentAccount: z.boolean().meta({ description: 'True when the bank linked another account: that saved account was not renewed and still needs re-authorizing' }),
}));

/**
 * A saved account as the merchant's server receives it (GET /links/{linkRef}, `onOutcome`, merchant
 * events) and stores it: `sealed` goes back to the proxy in a link session's `savedAccounts` or
 * `reauthorize`; the rest is for the merchant's own pages and records.
 */
export interface SavedAccount extends SavedAccountDisplay {
  /** Opaque (AES-256-GCM under the proxy's sealing keys), bound to the merchant user. Never give it to a browser. */
  sealed: string;
  /** Stable id of this saved account, the same after a re-authorization: key your records by it. */
  accountId: string;
  /** ISO 8601: when the shopper linked (or last re-authorized) the account. */
  linkedAt: string;
  /**
   * What the shopper agreed to when saving it; absent after a re-authorization (the first consent stands)
   * unless the shopper ticked the box again on that reconnect.
   */
  consent?: ConsentRecord;
  /** True when this replaces a stale saved account with the same `accountId` (a reconnect that linked the same account). */
  reauthorized?: true;
}

/** `sa_` and 22 base64url characters. */
export const newAccountId = (): string => `sa_${randomBytes(16).toString('base64url')}`;

export function sealSavedAccount(sealer: Sealer, payload: Omit<SavedAccountPayload, 'v'>): string {
  return sealer.seal(JSON.stringify({ v: 1, ...payload }), savedAccountContext(payload.merchantUserId));
}

/** Why a saved account passed back by the merchant was refused, in words for its developer. */
export function refusalReason(error: unknown): string {
  if (error instanceof UnsealError) {
    if (error.reason === 'unknown-key') return 'was sealed under a key this proxy does not have (OBV_SEALING_KEYS)';
    if (error.reason === 'tampered') return 'was sealed for another merchant user, or altered';
  }
  return 'is not a saved account sealed by this proxy';
}

/**
 * Opens a saved account for `merchantUserId`; throws UnsealError (malformed, unknown key, another user's
 * or altered) or a zod error for a payload that is not a saved account.
 */
export function openSavedAccount(sealer: Sealer, sealed: string, merchantUserId: string): SavedAccountPayload {
  const payload = SealedPayload.parse(JSON.parse(sealer.open(sealed, savedAccountContext(merchantUserId))));
  // The context already binds the user; the copy inside is checked too, so a mistake in either shows.
  if (payload.merchantUserId !== merchantUserId) throw new UnsealError('tampered');
  return payload;
}

/**
 * The token of a saved account a link session holds. It opened when the link session was made, so only a
 * sealing key dropped since then fails here: 422 `saved-account-refused`, saying `what` was refused and
 * naming `error.path`.
 */
export function reopenSavedAccountToken(sealer: Sealer, sealed: string, merchantUserId: string, what: string, error: { path: string; message: string }): string {
  try {
    return openSavedAccount(sealer, sealed, merchantUserId).accountToken;
  } catch (cause) {
    throw problem('saved-account-refused', `${what} ${refusalReason(cause)}.`, { errors: [error] });
  }
}
