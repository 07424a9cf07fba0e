// Link references: what the browser holds instead of the accountToken. Only the merchant's server turns
// one back into the verified account (GET /links/:linkRef, `proxy.readLink()`) or pays with it
// (payments/pay.ts). A reference is bound to the user, order and amount it was verified for.
import { problem } from '../common/errors.ts';
import { ID_PATTERN } from '../common/ids.ts';
import { markerKey } from '../storage/markers.ts';
import type { SessionRecord, SessionStore, VerificationOutcome } from '../storage/sessions.ts';
import type { Sealer } from '../sealing/sealer.ts';
import { openOutcome } from '../sealing/sealed-outcome.ts';
import { readPayment, type OrderDeps } from './orders.ts';
import type { SavedAccount } from '../storage/saved-accounts.ts';
import type { ReconnectResult } from '../storage/saved-accounts.ts';
import type { Verifications } from '../verifications/verifications.ts';

type Success = Extract<VerificationOutcome, { status: 'success' }>;

/**
 * Where a link reference leads: the session store (its marker and record), the keys that open its token,
 * and the bank step it must have confirmed (never waited for: it is confirmed or it is not).
 */
export interface LinkRefDeps {
  sessions: Pick<SessionStore, 'get' | 'readMark'>;
  sealer: Sealer;
  bankStep: Pick<Verifications, 'bankStepConfirmed'>;
}

/** A verified account as the merchant's server reads it: the token, and what it was verified for. */
export interface LinkedAccount {
  linkRef: string;
  accountToken: string;
  accountLabel: string;
  fiName: string;
  fiAccountType: string;
  merchantUserId: string | undefined;
  merchantTransactionId: string | undefined;
  amount: string | undefined;
  currency: string | undefined;
  /** The merchant transaction id this reference paid, once it has. */
  redeemedFor: string | undefined;
  /** The account saved for the user by this link (consent or re-authorization): store it for the next purchase. */
  savedAccount?: SavedAccount;
  /** A reconnect's success: the saved account it was for, and whether the bank linked another account (then `savedAccount`, if any, is a new one). */
  reconnect?: ReconnectResult;
  /** The stable id of the saved account this reference was made from (the shopper chose it, no bank step). */
  savedAccountId?: string;
}

/** The session and successful outcome behind a link reference; 404 (naming `linkRef`) when there is none. */
export async function resolveLinkRef(
  deps: LinkRefDeps,
  linkRef: string,
): Promise<{ record: SessionRecord; outcome: Success }> {
  const sessionId = ID_PATTERN.test(linkRef) ? await deps.sessions.readMark(markerKey.linkRef(linkRef)) : undefined;
  const record = sessionId === undefined ? undefined : await deps.sessions.get(sessionId);
  const outcome = record && openOutcome(deps.sealer, record);
  if (!record || outcome?.status !== 'success' || outcome.linkRef !== linkRef) {
    throw problem(
      'unknown-link-ref',
      'No verified account has this link reference (it may have expired: keep the account from onOutcome or GET /links for later use).',
      { errors: [{ path: 'linkRef', message: 'is not a known link reference' }] },
    );
  }
  await deps.bankStep.bankStepConfirmed(record, 'linkRef');
  return { record, outcome };
}

/** The order this reference paid, once it has (its order's payment was made with it). */
async function paidOrderOf(deps: OrderDeps, record: SessionRecord, linkRef: string): Promise<string | undefined> {
  if (record.merchantTransactionId === undefined) return undefined;
  const payment = await readPayment(deps, record.merchantTransactionId);
  return typeof payment === 'object' && payment.linkRef === linkRef && payment.state !== 'not-charged'
    ? payment.merchantTransactionId
    : undefined;
}

/** The verified account behind `linkRef`, token included, for the merchant's server; 404/403 as resolveLinkRef. */
export async function readLinkedAccount(deps: LinkRefDeps & OrderDeps, linkRef: string): Promise<LinkedAccount> {
  const { record, outcome } = await resolveLinkRef(deps, linkRef);
  const account: LinkedAccount = {
    linkRef,
    accountToken: outcome.accountToken,
    accountLabel: outcome.accountLabel,
    fiName: outcome.fiName,
    fiAccountType: outcome.fiAccountType,
    merchantUserId: record.merchantUserId,
    merchantTransactionId: record.merchantTransactionId,
    amount: record.amount,
    currency: record.currency,
    redeemedFor: await paidOrderOf(deps, record, linkRef),
    ...(outcome.savedAccount ? { savedAccount: outcome.savedAccount } : {}),
    ...(outcome.reconnect ? { reconnect: outcome.reconnect } : {}),
    ...(record.savedAccountId ? { savedAccountId: record.savedAccountId } : {}),
  };
  return account;
}
