// Saved accounts in a link session: the merchant's server passes the user's sealed saved accounts (and
// may ask to re-authorize one); the proxy opens each one for that user when the link session is made
// and refuses, naming its index, any it cannot open. The browser then sees only an opaque id per
// offered account (fresh for this link session) and its display fields: never a sealed string or token.
import { maskedConsumer, type DeclaredConsumer } from '../common/masking.ts';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config/schema.ts';
import type { Sealer } from '../sealing/sealer.ts';
import type { RemovalStore } from '../storage/removals.ts';
import { problem } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import { accountWords } from '../words/outcomes.ts';
import { consentWords, type ConsentWords } from '../words/consent.ts';
import { offerWords, type OfferWords } from '../words/offer.ts';
import { openSavedAccount, refusalReason } from './saved-account.ts';

/** At most this many saved accounts per link session: a list to choose from, not a store. */
export const MAX_SAVED_ACCOUNTS = 10;

/** A sealed saved account as the merchant's server passes it back. */
const SealedString = z.string().min(1).max(4096);

/** The link session fields of saved accounts (CreateLinkSessionBody, CONTRACTS §3). */
export const SavedAccountFields = {
  /** The user's saved accounts (`sealed` strings from earlier successes), offered first in this order. */
  savedAccounts: z
    .array(SealedString)
    .max(MAX_SAVED_ACCOUNTS, `must list at most ${MAX_SAVED_ACCOUNTS} saved accounts`)
    .optional(),
  /** Offer the shopper an (unchecked) choice to save the account they link now. */
  allowSaving: z.boolean().optional(),
  /** A stale saved account to re-authorize: the element offers "Reconnect …" and the bank step carries its token. */
  reauthorize: SealedString.optional(),
};

/** An offered account as the link session keeps it: the browser's id for it, its seal and its display fields. */
export const OfferedAccount = z.object({
  id: z.string(),
  sealed: z.string(),
  accountId: z.string(),
  accountLabel: z.string(),
  fiName: z.string(),
  fiAccountType: z.string(),
});
export type OfferedAccount = z.infer<typeof OfferedAccount>;

/** The saved-account part of a stored link session. */
export const StoredSavedAccountFields = {
  savedAccounts: z.array(OfferedAccount).optional(),
  allowSaving: z.boolean().optional(),
  reauthorize: OfferedAccount.optional(),
};

/**
 * Opens every saved account of a new link session for `merchantUserId`; a 422 naming each one that does
 * not open (another user's, altered, under an unknown key), so none is ever offered.
 */
export function openOfferedAccounts(
  deps: { sealer: Sealer; logger: Logger },
  merchantUserId: string,
  input: { savedAccounts?: string[] | undefined; reauthorize?: string | undefined },
) {
  const errors: { path: string; message: string }[] = [];
  const open = (sealed: string, path: string): OfferedAccount | undefined => {
    try {
      const { accountId, accountLabel, fiName, fiAccountType } = openSavedAccount(deps.sealer, sealed, merchantUserId);
      return { id: newId(), sealed, accountId, accountLabel, fiName, fiAccountType };
    } catch (error) {
      errors.push({ path, message: refusalReason(error) });
      return undefined;
    }
  };
  const savedAccounts = input.savedAccounts?.map((sealed, index) => open(sealed, `savedAccounts.${index}`));
  const reauthorize = input.reauthorize === undefined ? undefined : open(input.reauthorize, 'reauthorize');
  if (errors.length > 0) {
    deps.logger.warn({ refused: errors.map((e) => e.path) }, 'refused saved accounts in a link session');
    throw problem(
      'saved-account-refused',
      `These saved accounts cannot be used for user ${merchantUserId}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}.`,
      { errors },
    );
  }
  return {
    ...(savedAccounts?.length ? { savedAccounts: savedAccounts as OfferedAccount[] } : {}),
    ...(reauthorize ? { reauthorize } : {}),
  };
}

/** An offered account as the browser sees it: its id in this link session and what to show. */
export interface OfferedAccountView {
  id: string;
  accountLabel: string;
  fiName: string;
  fiAccountType: string;
  displayLabel: string;
  spokenLabel: string;
}

/** What the element is offered for a link session (POST /saved-accounts/offer, CONTRACTS §2). */
export interface OfferView {
  accounts: OfferedAccountView[];
  /** The element's words for the list and for Reconnect, in the link session's language. */
  words: OfferWords;
  /** Present when the link session allows saving: the consent box's words. */
  saving?: ConsentWords;
  /**
   * Present when the link session re-authorizes a saved account: the account to reconnect, its
   * `displayLabel`/`spokenLabel` the whole title ("Reconnect Sandbox Federal Bank ••••4321").
   */
  reconnect?: Omit<OfferedAccountView, 'id'>;
}

/** What accounts/ reads of a link session (link-sessions/link-sessions.ts `LinkSession` holds it all). */
export interface OfferingLinkSession {
  merchantUserId: string;
  merchantTransactionId: string;
  language?: string | undefined;
  savedAccounts?: OfferedAccount[] | undefined;
  allowSaving?: boolean | undefined;
  reauthorize?: OfferedAccount | undefined;
  /** The consumer the merchant declared (named in the consent words of a hosted page). */
  consumer?: DeclaredConsumer | undefined;
  /** Set for a hosted page's link session (link-sessions/hosted.ts). */
  hosted?: object | undefined;
}

/** Whose purchases a hosted page's saved account is for, in its consent words; undefined elsewhere (the checkout is the user's own). */
export function savedFor(session: OfferingLinkSession): string | undefined {
  return session.hosted && session.consumer ? maskedConsumer(session.consumer) : undefined;
}

/** Where removals are remembered, for what is still offered. */
type Removals = { removals: Pick<RemovalStore, 'isRemoved'> };

const view = (
  { id, accountLabel, fiName, fiAccountType }: OfferedAccount,
  language: string | undefined,
): OfferedAccountView => ({
  id,
  accountLabel,
  fiName,
  fiAccountType,
  ...accountWords(accountLabel, fiAccountType, language),
});

/** The offered accounts of link session `linkSessionId` that the shopper has not removed. */
export async function stillOffered(deps: Removals, session: OfferingLinkSession): Promise<OfferedAccount[]> {
  const accounts = session.savedAccounts ?? [];
  const removed = await Promise.all(accounts.map((a) => deps.removals.isRemoved(session.merchantUserId, a.accountId)));
  return accounts.filter((_, index) => !removed[index]);
}

/**
 * A 410 naming each saved account of a new link session that the shopper removed before: the proxy
 * remembers removals itself (storage/removals.ts), so a copy the merchant's server still holds is never
 * offered again, with or without an onSavedAccountRemoved hook or events.
 */
export async function refuseRemoved(
  deps: Removals,
  merchantUserId: string,
  offered: { savedAccounts?: OfferedAccount[]; reauthorize?: OfferedAccount },
): Promise<void> {
  const named = [
    ...(offered.savedAccounts ?? []).map((account, index) => ({ account, path: `savedAccounts.${index}` })),
    ...(offered.reauthorize ? [{ account: offered.reauthorize, path: 'reauthorize' }] : []),
  ];
  const removed = await Promise.all(
    named.map(({ account }) => deps.removals.isRemoved(merchantUserId, account.accountId)),
  );
  const errors = named
    .filter((_, index) => removed[index])
    .map(({ path }) => ({ path, message: 'was removed by the shopper; delete it from your records' }));
  if (errors.length > 0) {
    throw problem(
      'saved-account-removed',
      `The shopper removed these saved accounts: ${errors.map((e) => e.path).join(', ')}. Delete them from your records.`,
      { errors },
    );
  }
}

/**
 * A 410 naming each saved account of a new link session sealed before its user was forgotten
 * (forget-user.ts): whatever copy the merchant's server kept, none is offered or paid with again; an
 * account linked since (the shopper came back) is the user's anew.
 */
export async function refuseForgotten(
  deps: { sealer: Sealer; removals: Pick<RemovalStore, 'forgottenAt'> },
  merchantUserId: string,
  input: { savedAccounts?: string[] | undefined; reauthorize?: string | undefined },
): Promise<void> {
  const forgottenAt = await deps.removals.forgottenAt(merchantUserId);
  if (forgottenAt === undefined) return;
  const named = [
    ...(input.savedAccounts ?? []).map((sealed, index) => ({ sealed, path: `savedAccounts.${index}` })),
    ...(input.reauthorize === undefined ? [] : [{ sealed: input.reauthorize, path: 'reauthorize' }]),
  ];
  // Each one opened already (openOfferedAccounts): only its linkedAt is read here.
  const errors = named
    .filter(({ sealed }) => openSavedAccount(deps.sealer, sealed, merchantUserId).linkedAt <= forgottenAt)
    .map(({ path }) => ({ path, message: 'was saved before the user was forgotten; delete it from your records' }));
  if (errors.length > 0) {
    throw problem(
      'saved-account-removed',
      `These saved accounts were saved before the user was forgotten: ${errors.map((e) => e.path).join(', ')}. Delete them from your records.`,
      { errors },
    );
  }
}

export async function offerView(
  deps: Removals & { config: Pick<ProxyConfig, 'merchantName'> },
  session: OfferingLinkSession,
): Promise<OfferView> {
  const { language, reauthorize } = session;
  // The account to reconnect is offered as Reconnect only, never also preselected in the list, where
  // every Pay with it would be refused as stale (a merchant may pass it in savedAccounts too).
  const accounts = (await stillOffered(deps, session))
    .filter((account) => account.accountId !== reauthorize?.accountId)
    .map((account) => view(account, language));
  const offer: OfferView = { accounts, words: offerWords(language) };
  if (session.allowSaving) offer.saving = consentWords(language, deps.config.merchantName, savedFor(session));
  if (reauthorize) {
    // The element's title as is: "Reconnect Sandbox Federal Bank Checking ••••4321" (the account's type with
    // its masked number, as in the saved list), and how a screen reader says it ("…, Checking ending in 4321").
    const { id: _browserId, displayLabel, spokenLabel, ...reconnect } = view(reauthorize, language);
    const { reconnect: verb } = offer.words;
    offer.reconnect = {
      ...reconnect,
      displayLabel: `${verb} ${reconnect.fiName} ${displayLabel}`,
      spokenLabel: `${verb} ${reconnect.fiName}, ${spokenLabel}`,
    };
  }
  return offer;
}
