// Whether a verification's success is saved for the merchant user, decided when it starts: the link
// session re-authorizes a saved account (the success renews it, same account id, when it is the same
// account: reconnect.ts), or it allows saving and the shopper ticked the consent box (the start names the
// version of the words it showed). One row per bank account: a success that links an account the user has
// saved already (one the link session knows: offered and not removed, or the one to re-authorize) renews
// that saved account under its `accountId`, whichever way it was linked; sameness is reconnect.ts's
// (bank, type and masked number: the provider names an account by nothing else, docs/UPSTREAM.md D21).
import type { ProxyConfig } from '../config/schema.ts';
import type { Sealer } from '../sealing/sealer.ts';
import type { SessionRecord, VerificationOutcome } from '../storage/sessions.ts';
import type { ConsentRecord, ReconnectResult, ReconnectTarget, SavedAccount } from '../storage/saved-accounts.ts';
import type { RemovalStore } from '../storage/removals.ts';
import { validationProblem } from '../common/validation.ts';
import { consentWords } from '../words/consent.ts';
import { consentAddress, consentUserAgent } from './consent.ts';
import { sameAccount } from './reconnect.ts';
import { openSavingConsent, sealSavingConsent } from '../sealing/sealed-outcome.ts';
import { newAccountId, reopenSavedAccountToken, sealSavedAccount } from './saved-account.ts';
import { savedFor, type OfferingLinkSession } from './offer.ts';

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
export function savingFor(
  deps: ConsentDeps & { sealer: Sealer },
  client: ShopperClient,
  session: OfferingLinkSession,
  consentVersion: string | undefined,
  another = false,
): SessionRecord['saving'] {
  // The address and user agent are personal data: sealed in the record (sealing/sealed-outcome.ts).
  const consent =
    consentVersion === undefined
      ? undefined
      : sealSavingConsent(deps.sealer, session.merchantUserId, consentRecord(deps, client, session, consentVersion));
  // The user's saved accounts the success may turn out to be (their display fields only, no seal);
  // stillKnown() then drops those the shopper removed.
  const known = [...(session.savedAccounts ?? []), ...(session.reauthorize ? [session.reauthorize] : [])].map(target);
  const extra = { ...(consent ? { consent } : {}), ...(known.length ? { known } : {}) };
  if (session.reauthorize && !another)
    return { accountId: newAccountId(), ...extra, reconnect: target(session.reauthorize) };
  return consent ? { accountId: newAccountId(), ...extra } : undefined;
}

const target = ({ accountId, accountLabel, fiName, fiAccountType }: ReconnectTarget): ReconnectTarget => ({
  accountId,
  accountLabel,
  fiName,
  fiAccountType,
});

/** `known` without the saved accounts the shopper removed: a removed account's id is refused from then on, never renewed. */
export async function stillKnown(
  removals: Pick<RemovalStore, 'isRemoved'>,
  merchantUserId: string,
  known: ReconnectTarget[],
): Promise<ReconnectTarget[]> {
  const removed = await Promise.all(known.map((account) => removals.isRemoved(merchantUserId, account.accountId)));
  return known.filter((_, index) => !removed[index]);
}

/** The record of the consent the start names (the version of the words shown); 400 where saving is not allowed. */
function consentRecord(
  deps: ConsentDeps,
  client: ShopperClient,
  session: OfferingLinkSession,
  consentVersion: string,
): ConsentRecord {
  const refuse = (message: string) => validationProblem('The request body', [{ path: 'consent', message }]);
  if (!session.allowSaving)
    throw refuse('is not accepted: this link session does not allow saving the account (allowSaving)');
  const words = consentWords(session.language, deps.config.merchantName, savedFor(session));
  if (consentVersion !== words.version)
    throw refuse(`must be the version of the consent words the element showed (${words.version})`);
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
export function tokenToReauthorize(
  deps: { sealer: Sealer },
  session: OfferingLinkSession,
  another = false,
): string | undefined {
  if (!session.reauthorize || another) return undefined;
  return reopenSavedAccountToken(
    deps.sealer,
    session.reauthorize.sealed,
    session.merchantUserId,
    'The saved account to re-authorize',
    { path: 'linkToken', message: 'names a saved account that cannot be opened' },
  );
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
export function savedAccountFor(
  deps: { sealer: Sealer; now: () => number },
  record: SessionRecord,
  outcome: Omit<Success, 'linkRef'>,
): SuccessSaving {
  const { saving, merchantUserId } = record;
  if (!saving || !merchantUserId) return {};
  const { accountToken, accountLabel, fiName, fiAccountType } = outcome;
  const linkedAt = new Date(deps.now()).toISOString();
  const consent = saving.consent && openSavingConsent(deps.sealer, merchantUserId, saving.consent);
  const save = (accountId: string, reauthorized: boolean): SavedAccount => ({
    sealed: sealSavedAccount(deps.sealer, {
      accountId,
      accountToken,
      merchantUserId,
      accountLabel,
      fiName,
      fiAccountType,
      linkedAt,
    }),
    accountId,
    accountLabel,
    fiName,
    fiAccountType,
    linkedAt,
    ...(consent ? { consent } : {}),
    ...(reauthorized ? { reauthorized: true as const } : {}),
  });
  const reconnecting = saving.reconnect;
  // An account the user has saved already keeps its id: the merchant's row for it is renewed, not doubled.
  const accountId = saving.known?.find((known) => sameAccount(known, outcome))?.accountId ?? saving.accountId;
  // A record started before reconnects were compared (`reauthorized` alone): renewed, as it was promised.
  if (!reconnecting) return { savedAccount: save(accountId, !!saving.reauthorized) };
  if (sameAccount(reconnecting, outcome))
    return {
      savedAccount: save(reconnecting.accountId, true),
      reconnect: { accountId: reconnecting.accountId, differentAccount: false },
    };
  return {
    ...(saving.consent ? { savedAccount: save(accountId, false) } : {}),
    reconnect: { accountId: reconnecting.accountId, differentAccount: true },
  };
}
