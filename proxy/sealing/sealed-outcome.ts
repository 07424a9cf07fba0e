// The one place a success's accountToken is sealed before it is stored, and opened again for the server
// side that needs it (the transaction, the merchant's onOutcome hook). The seal is bound to the session,
// so a sealed token copied into another record does not open there. A consent record's address and user
// agent (personal data) are sealed the same way, wherever a record keeps one: a start's `saving` (bound
// to the merchant user: the session id does not exist yet) and a success's saved account (bound to the session).
import type { Sealer } from './sealer.ts';
import type { SessionRecord, StoredOutcome, VerificationOutcome } from '../storage/sessions.ts';
import {
  ConsentClientSchema,
  type ConsentRecord,
  type SavedAccount,
  type StoredConsentRecord,
  type StoredSavedAccount,
} from '../storage/saved-accounts.ts';

const tokenContext = (sessionId: string) => `account-token:${sessionId}`;
const outcomeConsentContext = (sessionId: string) => `consent-client:session:${sessionId}`;
const savingConsentContext = (merchantUserId: string) => `consent-client:user:${merchantUserId}`;

function sealConsent(sealer: Sealer, consent: ConsentRecord, context: string): StoredConsentRecord {
  const { ip, userAgent, ...words } = consent;
  return { ...words, sealedClient: sealer.seal(JSON.stringify({ ip, userAgent }), context) };
}

function openConsent(sealer: Sealer, consent: StoredConsentRecord | ConsentRecord, context: string): ConsentRecord {
  // Written by a version that kept them in the clear (a session started before the upgrade).
  if (!('sealedClient' in consent)) return consent;
  const { sealedClient, ...words } = consent;
  return { ...words, ...ConsentClientSchema.parse(JSON.parse(sealer.open(sealedClient, context))) };
}

/** A start's consent as its `saving` keeps it (sealed for the merchant user). */
export function sealSavingConsent(sealer: Sealer, merchantUserId: string, consent: ConsentRecord): StoredConsentRecord {
  return sealConsent(sealer, consent, savingConsentContext(merchantUserId));
}

/** A start's consent opened again (for the saved account its success makes); throws UnsealError. */
export function openSavingConsent(
  sealer: Sealer,
  merchantUserId: string,
  consent: StoredConsentRecord | ConsentRecord,
): ConsentRecord {
  return openConsent(sealer, consent, savingConsentContext(merchantUserId));
}

/** A stored success's saved account as the merchant's server receives it (its consent opened); throws UnsealError. */
export function openSavedAccount(sealer: Sealer, sessionId: string, saved: StoredSavedAccount): SavedAccount {
  const { consent, ...account } = saved;
  return {
    ...account,
    ...(consent ? { consent: openConsent(sealer, consent, outcomeConsentContext(sessionId)) } : {}),
  };
}

/** `outcome` as the store keeps it: a success's token sealed for `sessionId`, and its consent's address and user agent. */
export function sealOutcome(sealer: Sealer, sessionId: string, outcome: VerificationOutcome): StoredOutcome {
  if (outcome.status !== 'success') return outcome;
  const { accountToken, savedAccount, ...display } = outcome;
  const stored =
    savedAccount &&
    (() => {
      const { consent, ...account } = savedAccount;
      return {
        ...account,
        ...(consent ? { consent: sealConsent(sealer, consent, outcomeConsentContext(sessionId)) } : {}),
      };
    })();
  return {
    ...display,
    ...(stored ? { savedAccount: stored } : {}),
    sealedAccountToken: sealer.seal(accountToken, tokenContext(sessionId)),
  };
}

/** The record's outcome with its token and consent opened (server side only); throws UnsealError for a foreign seal. */
export function openOutcome(sealer: Sealer, record: SessionRecord): VerificationOutcome | undefined {
  const outcome = record.outcome;
  if (outcome?.status !== 'success') return outcome;
  const { sealedAccountToken, savedAccount, ...display } = outcome;
  return {
    ...display,
    ...(savedAccount ? { savedAccount: openSavedAccount(sealer, record.sessionId, savedAccount) } : {}),
    accountToken: sealer.open(sealedAccountToken, tokenContext(record.sessionId)),
  };
}
