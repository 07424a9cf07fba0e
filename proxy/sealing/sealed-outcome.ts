// The one place a success's accountToken is sealed before it is stored, and opened again for the server
// side that needs it (the transaction, the merchant's onOutcome hook). The seal is bound to the session,
// so a sealed token copied into another record does not open there.
import type { Sealer } from './sealer.ts';
import type { SessionRecord, StoredOutcome, VerificationOutcome } from '../storage/sessions.ts';

const tokenContext = (sessionId: string) => `account-token:${sessionId}`;

/** `outcome` as the store keeps it: a success's token sealed for `sessionId`. */
export function sealOutcome(sealer: Sealer, sessionId: string, outcome: VerificationOutcome): StoredOutcome {
  if (outcome.status !== 'success') return outcome;
  const { accountToken, ...display } = outcome;
  return { ...display, sealedAccountToken: sealer.seal(accountToken, tokenContext(sessionId)) };
}

/** The record's outcome with its token opened (server side only); throws UnsealError for a foreign seal. */
export function openOutcome(sealer: Sealer, record: SessionRecord): VerificationOutcome | undefined {
  const outcome = record.outcome;
  if (outcome?.status !== 'success') return outcome;
  const { sealedAccountToken, ...display } = outcome;
  return { ...display, accountToken: sealer.open(sealedAccountToken, tokenContext(record.sessionId)) };
}
