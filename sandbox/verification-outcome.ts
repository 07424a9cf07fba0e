// What happens when the consumer finishes at the bank: the verification records its result once, a
// success links (or re-links) an account under an accountToken, and the notification is queued.
import type { ProviderContext } from './context.ts';
import { takeCounted } from './faults.ts';
import type { BankAccount, ConsumerOutcome } from './sandbox-data.ts';
import type { Verification, VerificationResult } from './state.ts';
import { randomId } from './state.ts';

/** The notification body (docs/CONTRACTS.md §1, endpoint 3). */
export interface NotificationPayload {
  verificationId: string;
  verificationStatus: VerificationResult['status'];
  merchant: Record<string, string>;
  transaction: Record<string, string | undefined>;
  account: Record<string, string>;
  errorCode?: string;
  errorMessage?: string;
}

export function notificationPayload(verification: Verification, result: VerificationResult): NotificationPayload {
  const { merchantId, merchantUserId, merchantTransactionId, merchantSubId } = verification.request.merchant;
  const common = {
    verificationId: verification.verificationId,
    verificationStatus: result.status,
    merchant: {
      merchantId,
      merchantUserId,
      merchantTransactionId,
      ...(merchantSubId === undefined ? {} : { merchantSubId }),
    },
    transaction: verification.request.transaction,
  };
  if (result.status === 'SUCCESS')
    return { ...common, account: { accountToken: result.accountToken, ...result.account } };
  return { ...common, account: {}, errorCode: result.errorCode, errorMessage: result.errorMessage };
}

/** Records `outcome` as the verification's result and queues its notification. */
export function completeVerification(
  context: ProviderContext,
  verification: Verification,
  consumerOutcome: ConsumerOutcome,
  username: string,
): VerificationResult {
  const now = context.config.now();
  // The fail-next control: this verification fails with the chosen code, whatever the consumer did at the bank.
  const forced = context.faults.verificationFailures;
  const outcome: ConsumerOutcome = takeCounted(forced)
    ? { kind: 'failure', failure: { errorCode: forced.errorCode, errorMessage: forced.errorMessage } }
    : consumerOutcome;
  let result: VerificationResult;
  if (outcome.kind === 'success') {
    // Re-verification keeps the accountToken the merchant already stores for this consumer, when the
    // consumer signs in to the same account; another account is linked under a token of its own, and the
    // first one stays as it was (stale, if it was).
    const reverified = verification.request.accountToken;
    const previous = reverified === undefined ? undefined : context.state.accounts.get(reverified)?.account;
    const accountToken =
      reverified !== undefined && previous && sameAccount(previous, outcome.account)
        ? reverified
        : randomId('acct_', 24);
    context.state.accounts.set(accountToken, {
      accountToken,
      clientId: verification.clientId,
      username,
      account: outcome.account,
      linkedAt: now,
    });
    result = { status: 'SUCCESS', accountToken, account: outcome.account };
  } else {
    result = { status: 'FAILURE', ...outcome.failure };
  }
  verification.result = result;
  context.config.logger.info(
    { verificationId: verification.verificationId, status: result.status },
    'verification completed',
  );
  if (verification.notificationURL) {
    context.notifier.notify(verification.notificationURL, notificationPayload(verification, result));
  }
  return result;
}

/** The sandbox bank's own notion of one account: same bank, type and masked number. */
function sameAccount(a: BankAccount, b: BankAccount): boolean {
  return a.fiName === b.fiName && a.fiAccountType === b.fiAccountType && a.accountLabel === b.accountLabel;
}
