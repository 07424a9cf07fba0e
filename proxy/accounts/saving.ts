// Whether a verification's success is saved for the merchant user, decided when it starts: the link
// session re-authorizes a saved account (the success renews it, same account id, when it is the same
// account: reconnect.ts), or it allows saving and the shopper ticked the consent box (the start names the
// version of the words it showed).
import type { ProxyConfig } from '../config/schema.ts';
import type { Sealer } from '../sealing/sealer.ts';
import type { SessionRecord, VerificationOutcome } from '../storage/sessions.ts';
import type { ConsentRecord, ReconnectResult, SavedAccount } from '../storage/saved-accounts.ts';
import { validationProblem } from '../common/validation.ts';
import { consentWords } from '../words/consent.ts';
import { consentAddress, consentUserAgent } from './consent.ts';
import { sameAccount } from './reconnect.ts';
import { newAccountId, reopenSavedAccountToken, sealSavedAccount } from './saved-account.ts';
import type { OfferingLinkSession } from './offer.ts';

/** The browser that starts: its address and User-Agent, as the request carried them (a consent record keeps both). */
export interface ShopperClient {
  address: string | undefined;
  userAgent: string | undefined;
}

/** What a consent record needs: the store's name in the words, and a clock. */
type ConsentDeps = { config: Pick<ProxyConfig, 'merchantName'>; now: () => number };

/**
 * `record.saving` for a start from `session` with the shopper's consent choice (`consentVersion` when
 * ticked). A re-authorizing link session (unless the shopper chose `another` account) names the saved
 * account it reconnects, and keeps a consent given on the same start: it is the new saved account's if
 * the bank links a different account (reconnect.ts).
 */
export function savingFor(deps: ConsentDeps, client: ShopperClient, session: OfferingLinkSession, consentVersion: string | undefined, another = false): SessionRecord['saving'] {
  const consent = consentVersion === undefined ? undefined : consentRecord(deps, client, session, consentVersion);
  if (session.reauthorize && !another) {
    const { accountId, accountLabel, fiName, fiAccountType } = session.reauthorize;
    return { accountId: newAccountId(), ...(consent ? { consent } : {}), reconnect: { accountId, accountLabel, fiName, fiAccountType } };
  }
  return consent ? { accountId: newAccountId(), consent } : undefined;
}

/** The record of the consent the start names (the version of the words shown); 400 where saving is not allowed. */
function consentRecord(deps: ConsentDeps, client: ShopperClient, session: OfferingLinkSession, consentVersion: string): ConsentRecord {
  const refuse = (message: string) => validationProblem('The request body', [{ path: 'consent', message }]);
  if (!session.allowSaving) throw refuse('is not accepted: this link session does not allow saving the account (allowSaving)');
  const words = consentWords(session.language, deps.config.merchantName);
  if (consentVersion !== words.version) throw refuse(`must be the version of the consent words the element showed (${words.version})`);
  return {
    version: words.version,
    lang: words.lang,
    checkbox: words.checkbox,
    text: `${words.text} ${words.details}`,
    acceptedAt: new Date(deps.now()).toISOString(),
    ip: consentAddress(client.address),
    userAgent: consentUserAgent(client.userAgent),
  };
}

/** The token of the saved account a re-authorizing link session names (it opened when the session was made). */
export function tokenToReauthorize(deps: { sealer: Sealer }, session: OfferingLinkSession, another = false): string | undefined {
  if (!session.reauthorize || another) return undefined;
  return reopenSavedAccountToken(deps.sealer, session.reauthorize.sealed, session.merchantUserId, 'The saved account to re-authorize',
    { path: 'linkToken', message: 'names a saved account that cannot be opened' });
}

type Success = Extract<VerificationOutcome, { status: 'success' }>;

/** What a success saves: the saved account (when its start asked for one), and for a reconnect, whether it was the same account. */
export interface SuccessSaving {
  savedAccount?: SavedAccount;
  reconnect?: ReconnectResult;
}

/**
 * The saved account a success makes for `record`'s merchant user, when its start asked for one. A
 * reconnect that linked the same account renews it (same id, `reauthorized`); one that linked another
 * account saves that one only with a consent of its own, under a new id, and leaves the stale one alone.
 */
export function savedAccountFor(deps: { sealer: Sealer; now: () => number }, record: SessionRecord, outcome: Omit<Success, 'linkRef'>): SuccessSaving {
  const { saving, merchantUserId } = record;
  if (!saving || !merchantUserId) return {};
  const { accountToken, accountLabel, fiName, fiAccountType } = outcome;
  const linkedAt = new Date(deps.now()).toISOString();
  const save = (accountId: string, reauthorized: boolean): SavedAccount => ({
    sealed: sealSavedAccount(deps.sealer, { accountId, accountToken, merchantUserId, accountLabel, fiName, fiAccountType, linkedAt }),
    accountId,
    accountLabel,
    fiName,
    fiAccountType,
    linkedAt,
    ...(saving.consent ? { consent: saving.consent } : {}),
    ...(reauthorized ? { reauthorized: true as const } : {}),
  });
  const target = saving.reconnect;
  // A record started before reconnects were compared (`reauthorized` alone): renewed, as it was promised.
  if (!target) return { savedAccount: save(saving.accountId, !!saving.reauthorized) };
  if (sameAccount(target, outcome)) return { savedAccount: save(target.accountId, true), reconnect: { accountId: target.accountId, differentAccount: false } };
  return { ...(saving.consent ? { savedAccount: save(saving.accountId, false) } : {}), reconnect: { accountId: target.accountId, differentAccount: true } };
}
