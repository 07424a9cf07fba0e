// What the shopper does with an offered saved account in the element: choose it (the form gets a link
// reference for this order at once: no bank step, no upstream verification), or remove it (it is no
// longer offered in this link session, and the merchant's server hears of it to delete its copy).
import type { ProxyContext } from '../context.ts';
import { problem } from '../common/errors.ts';
import type { LinkSession } from '../link-sessions/link-sessions.ts';
import type { CompleteDelivery } from '../verifications/delivery.ts';
import { safeError } from '../common/logger.ts';
import { newId, sessionLogRef } from '../common/ids.ts';
import { sealOutcome } from '../sealing/sealed-outcome.ts';
import { browserOutcome, type BrowserOutcome } from '../storage/result-bus.ts';
import { type SessionRecord } from '../storage/sessions.ts';
import type { OfferedAccount } from './offer.ts';
import { stillOffered } from './offer.ts';
import { reopenSavedAccountToken } from './saved-account.ts';
import type { SavedAccountRemoval } from '../hooks.ts';

/** The link session an offered account is chosen or removed in: its id and values. */
export interface OfferingSession {
  id: string;
  session: LinkSession;
}

/** The offered account the browser names by its id in this link session; 404 when there is none (or it was removed). */
export async function findOffered(ctx: ProxyContext, { session }: OfferingSession, offeredId: string): Promise<OfferedAccount> {
  const offered = (await stillOffered(ctx, session)).find((account) => account.id === offeredId);
  if (!offered) {
    throw problem('unknown-saved-account', 'This link session offers no saved account with this id (or the shopper removed it).',
      { errors: [{ path: 'savedAccountId', message: 'is not a saved account offered in this link session' }] });
  }
  return offered;
}

/**
 * Pays with a saved account: a session for this order, settled as a success at once with the saved
 * token and a new link reference, delivered like any outcome (link index, `onOutcome`). `/transactions`
 * then pays it as it pays a bank link.
 */
export async function chooseSavedAccount(ctx: ProxyContext, deliver: CompleteDelivery, { id, session }: OfferingSession, offered: OfferedAccount): Promise<BrowserOutcome> {
  const accountToken = reopenSavedAccountToken(ctx.sealer, offered.sealed, session.merchantUserId, 'This saved account',
    { path: 'savedAccountId', message: 'cannot be opened' });
  const now = ctx.now();
  const sessionId = newId();
  const record: SessionRecord = {
    sessionId,
    notificationRef: newId(),
    consumerUrl: '',
    state: 'pending',
    createdAt: now,
    expiresAt: now + ctx.config.sessionTtlMs,
    merchantUserId: session.merchantUserId,
    merchantTransactionId: session.merchantTransactionId,
    amount: session.amount,
    currency: session.currency,
    ...(session.language ? { language: session.language } : {}),
    linkSessionId: id,
    savedAccountId: offered.accountId,
  };
  await ctx.store.create(record);
  const { accountLabel, fiName, fiAccountType } = offered;
  const { record: settled } = await ctx.store.settle(sessionId, sealOutcome(ctx.sealer, sessionId, { status: 'success', linkRef: newId(), accountToken, accountLabel, fiName, fiAccountType }));
  await deliver(settled);
  ctx.metrics.starts.inc({ result: 'saved-account' });
  ctx.logger.info({ session: sessionLogRef(sessionId), merchantTransactionId: session.merchantTransactionId }, 'saved account chosen');
  return browserOutcome(settled.outcome!, session.language);
}

/** Removes `offered` from the link session; the merchant's hook runs once per removal (a retry after its failure runs it again). */
export async function removeSavedAccount(ctx: ProxyContext, { session }: OfferingSession, offered: OfferedAccount): Promise<SavedAccountRemoval> {
  const removal: SavedAccountRemoval = {
    merchantUserId: session.merchantUserId,
    accountId: offered.accountId,
    sealed: offered.sealed,
    accountLabel: offered.accountLabel,
    fiName: offered.fiName,
    fiAccountType: offered.fiAccountType,
    merchantTransactionId: session.merchantTransactionId,
    removedAt: new Date(ctx.now()).toISOString(),
  };
  // Remembered first, for good and for every deployment (a removal is refused in any later link session);
  // two removals at once (a double click): one of them tells the merchant.
  const { merchantUserId: user, accountId: account, removedAt, merchantTransactionId: order } = removal;
  if (!(await ctx.removals.record({ merchantUserId: user, accountId: account, removedAt, merchantTransactionId: order }))) return removal;
  const key = `saved-account-removed:${JSON.stringify([user, account])}`;
  try {
    await ctx.onSavedAccountRemoved?.(removal);
  } catch (error) {
    await ctx.removals.forget(user, account);
    ctx.logger.error({ err: safeError(error) }, 'the onSavedAccountRemoved hook failed; the account stays offered');
    throw problem('removal-hook-failed', 'The merchant\'s server could not record the removal; try again.');
  }
  const { merchantUserId, accountId, accountLabel, fiName, fiAccountType, merchantTransactionId } = removal;
  try {
    await ctx.events.emit('saved_account.removed', { merchantUserId, accountId, accountLabel, fiName, fiAccountType, merchantTransactionId }, { once: key });
  } catch (error) {
    // The hook has heard it; the event list is the second channel, logged when it cannot be written.
    ctx.logger.error({ err: safeError(error), merchantTransactionId }, 'the saved_account.removed event could not be recorded');
  }
  ctx.logger.info({ merchantTransactionId: session.merchantTransactionId }, 'saved account removed by the shopper');
  return removal;
}
