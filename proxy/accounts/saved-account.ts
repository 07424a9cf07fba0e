// Saved accounts: what a merchant's server keeps in its own database so a returning shopper pays in one
// click. The proxy keeps no database: it seals the account (token, merchant user, display fields, when it
// was linked) into an opaque string with the sealing keys (sealing/sealer.ts), bound to the merchant
// user, and opens it again when the merchant passes it back in a link session. Useless without the
// proxy's key; opens only for the user it was sealed for.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Sealer } from '../sealing/sealer.ts';
import { UnsealError } from '../sealing/sealer.ts';
import { problem } from '../common/errors.ts';

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
export function reopenSavedAccountToken(
  sealer: Sealer,
  sealed: string,
  merchantUserId: string,
  what: string,
  error: { path: string; message: string },
): string {
  try {
    return openSavedAccount(sealer, sealed, merchantUserId).accountToken;
  } catch (cause) {
    throw problem('saved-account-refused', `${what} ${refusalReason(cause)}.`, { errors: [error] });
  }
}
