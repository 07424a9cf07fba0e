// What the shopper does with an offered saved account in the element besides choosing it (a session
// settled at once: verifications/saved-choice.ts): find it by the id the offer gave it, or remove it (it is
// no longer offered, in this link session or any later one, and the merchant's server hears of it to
// delete its copy).
import type { Logger } from 'pino';
import { problem } from '../common/errors.ts';
import { safeError } from '../common/logger.ts';
import type { MerchantEvents } from '../events/events.ts';
import type { RemovalStore } from '../storage/removals.ts';
import type { SavedAccountDisplay } from '../storage/saved-accounts.ts';
import { stillOffered, type OfferedAccount, type OfferingLinkSession } from './offer.ts';

/**
 * Called once when a shopper removes a saved account in the element (after confirming): delete it from
 * your records. If it throws, the removal is refused (500) and the account stays offered.
 */
export type OnSavedAccountRemoved = (removal: SavedAccountRemoval) => void | Promise<void>;

/** What the merchant's server hears when a shopper removes a saved account (`onSavedAccountRemoved`, and merchant events). */
export interface SavedAccountRemoval extends SavedAccountDisplay {
  merchantUserId: string;
  /** The saved account's stable id: delete your record of it. */
  accountId: string;
  /** The sealed string as your server passed it in the link session. */
  sealed: string;
  /** The order whose checkout it was removed from. */
  merchantTransactionId: string;
  /** ISO 8601. */
  removedAt: string;
}

/**
 * What names the one `saved_account.removed` event of a user's saved account, whoever removed it (the
 * shopper, or forgetting the user: forget-user.ts), so the merchant hears of each account once.
 */
export const savedAccountRemovedKey = (merchantUserId: string, accountId: string): string =>
  `saved-account-removed:${JSON.stringify([merchantUserId, accountId])}`;

/** The offered account the browser names by its id in this link session; 404 when there is none (or it was removed). */
export async function findOffered(
  deps: { removals: Pick<RemovalStore, 'isRemoved'> },
  session: OfferingLinkSession,
  offeredId: string,
): Promise<OfferedAccount> {
  const offered = (await stillOffered(deps, session)).find((account) => account.id === offeredId);
  if (!offered) {
    throw problem(
      'unknown-saved-account',
      'This link session offers no saved account with this id (or the shopper removed it).',
      { errors: [{ path: 'savedAccountId', message: 'is not a saved account offered in this link session' }] },
    );
  }
  return offered;
}

/** What a removal needs: where removals are remembered, the merchant's hook and events, a log, a clock. */
export interface RemovalDeps {
  removals: RemovalStore;
  onSavedAccountRemoved?: OnSavedAccountRemoved | undefined;
  events: Pick<MerchantEvents, 'emit'>;
  logger: Logger;
  now: () => number;
}

/** Removes `offered` from the link session; the merchant's hook runs once per removal (a retry after its failure runs it again). */
export async function removeSavedAccount(
  deps: RemovalDeps,
  session: OfferingLinkSession,
  offered: OfferedAccount,
): Promise<SavedAccountRemoval> {
  const removal: SavedAccountRemoval = {
    merchantUserId: session.merchantUserId,
    accountId: offered.accountId,
    sealed: offered.sealed,
    accountLabel: offered.accountLabel,
    fiName: offered.fiName,
    fiAccountType: offered.fiAccountType,
    merchantTransactionId: session.merchantTransactionId,
    removedAt: new Date(deps.now()).toISOString(),
  };
  // Remembered first, for good and for every deployment (a removal is refused in any later link session);
  // two removals at once (a double click): one of them tells the merchant.
  const { merchantUserId: user, accountId: account, removedAt, merchantTransactionId: order } = removal;
  if (
    !(await deps.removals.record({ merchantUserId: user, accountId: account, removedAt, merchantTransactionId: order }))
  )
    return removal;
  try {
    await deps.onSavedAccountRemoved?.(removal);
  } catch (error) {
    await deps.removals.forget(user, account);
    deps.logger.error({ err: safeError(error) }, 'the onSavedAccountRemoved hook failed; the account stays offered');
    throw problem('removal-hook-failed', "The merchant's server could not record the removal; try again.");
  }
  const { merchantUserId, accountId, accountLabel, fiName, fiAccountType, merchantTransactionId } = removal;
  try {
    await deps.events.emit(
      'saved_account.removed',
      { merchantUserId, accountId, accountLabel, fiName, fiAccountType, merchantTransactionId, reason: 'shopper' },
      { once: savedAccountRemovedKey(user, account) },
    );
  } catch (error) {
    // The hook has heard it; the event list is the second channel, logged when it cannot be written.
    deps.logger.error(
      { err: safeError(error), merchantTransactionId },
      'the saved_account.removed event could not be recorded',
    );
  }
  deps.logger.info({ merchantTransactionId: session.merchantTransactionId }, 'saved account removed by the shopper');
  return removal;
}
