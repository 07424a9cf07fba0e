// A returning shopper chooses a saved account in the element: the page gets a link reference for this
// order at once (no bank step, no upstream verification), from a verification session settled as a
// success with the saved account's token. Chosen is not confirmed: the merchant hears of it (link.succeeded,
// `onOutcome`) and POST /transactions pays it, as it pays a bank link, only once the shopper confirmed it
// (confirmSavedAccount: the element at its form's submit or `confirm()`, the hosted page's Continue).
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config/schema.ts';
import { newId, sessionLogRef } from '../common/ids.ts';
import type { ProxyMetrics } from '../common/metrics.ts';
import type { SavedAccounts } from '../accounts/accounts.ts';
import type { LinkSessions } from '../link-sessions/link-sessions.ts';
import type { Sealer } from '../sealing/sealer.ts';
import { sealOutcome } from '../sealing/sealed-outcome.ts';
import { browserOutcome, type BrowserOutcome } from '../storage/result-bus.ts';
import type { SessionRecord, SessionStore } from '../storage/sessions.ts';
import { problem } from '../common/errors.ts';
import { markerKey, sessionMarkerTtlMs } from '../storage/markers.ts';
import type { CompleteDelivery } from './delivery.ts';

export interface SavedChoiceDeps {
  config: Pick<ProxyConfig, 'sessionTtlMs'>;
  store: Pick<SessionStore, 'create' | 'settle' | 'get' | 'mark' | 'readMark'>;
  sealer: Sealer;
  linkSessions: Pick<LinkSessions, 'resolve' | 'spend'>;
  accounts: Pick<SavedAccounts, 'find' | 'tokenOf'>;
  deliver: CompleteDelivery;
  metrics: Pick<ProxyMetrics, 'starts'>;
  logger: Logger;
  now: () => number;
}

/** The saved account `savedAccountId` of the link session of `linkToken`, chosen: its outcome, as the browser sees it. */
export async function chooseSavedAccount(
  deps: SavedChoiceDeps,
  linkToken: string,
  savedAccountId: string,
): Promise<BrowserOutcome> {
  const { id, session } = await deps.linkSessions.resolve(linkToken);
  const offered = await deps.accounts.find(session, savedAccountId);
  await deps.linkSessions.spend(id);
  const accountToken = deps.accounts.tokenOf(session, offered);
  const now = deps.now();
  const sessionId = newId();
  const record: SessionRecord = {
    sessionId,
    notificationRef: newId(),
    consumerUrl: '',
    state: 'pending',
    createdAt: now,
    expiresAt: now + deps.config.sessionTtlMs,
    merchantUserId: session.merchantUserId,
    merchantTransactionId: session.merchantTransactionId,
    amount: session.amount,
    currency: session.currency,
    ...(session.language ? { language: session.language } : {}),
    linkSessionId: id,
    ...(session.hosted ? { hosted: true as const } : {}),
    savedAccountId: offered.accountId,
    // A choice is the page's preselection until the shopper confirms it (confirmSavedAccount): on any page,
    // so a page opened and left (a mail scanner, a link preview, a shopper who walked away) releases nothing.
    awaitsConfirmation: true,
  };
  await deps.store.create(record);
  const { accountLabel, fiName, fiAccountType } = offered;
  const { record: settled } = await deps.store.settle(
    sessionId,
    sealOutcome(deps.sealer, sessionId, {
      status: 'success',
      linkRef: newId(),
      accountToken,
      accountLabel,
      fiName,
      fiAccountType,
    }),
  );
  await deps.deliver(settled);
  deps.metrics.starts.inc({ result: 'saved-account' });
  deps.logger.info(
    { session: sessionLogRef(sessionId), merchantTransactionId: session.merchantTransactionId },
    'saved account chosen',
  );
  return browserOutcome(settled.outcome!, session.language);
}

/**
 * The shopper confirmed the saved account its page chose (the element's form submit or `confirm()`, the
 * hosted page's Continue): `linkRef` is the reference the choice gave that page. Released to the merchant then (link.succeeded, onOutcome; payable). A reference
 * that needs no confirmation, or was confirmed already, changes nothing; an unknown one is a 404.
 */
export async function confirmSavedAccount(deps: SavedChoiceDeps, linkRef: string): Promise<void> {
  const sessionId = await deps.store.readMark(markerKey.linkRef(linkRef));
  const record = sessionId === undefined ? undefined : await deps.store.get(sessionId);
  if (!record || record.outcome?.status !== 'success') {
    throw problem('unknown-link-ref', 'No saved account was chosen with this link reference.', {
      errors: [{ path: 'linkRef', message: 'is not a known link reference' }],
    });
  }
  if (!record.awaitsConfirmation) return;
  await deps.store.mark(
    markerKey.choiceConfirmed(record.sessionId),
    'confirmed',
    sessionMarkerTtlMs(record, deps.now()),
  );
  await deps.deliver(record);
  deps.logger.info({ session: sessionLogRef(record.sessionId) }, 'saved account confirmed');
}
