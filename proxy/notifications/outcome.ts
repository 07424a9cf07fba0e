// Reads the outcome out of a notification body (docs/UPSTREAM.md#d14-status-words). `verificationStatus` decides: a success must
// say so and carry an accountToken, a failure is a failure whatever else it carries, and a status the
// proxy does not know is refused — it is never guessed from the fields that happen to be present.
// Field placement is lenient: the account fields inside `account` or at the top level, the error as
// errorCode/errorMessage or error.code/error.message.
import { z } from 'zod';
import { problem, type ProblemError } from '../common/errors.ts';
import type { FailureOutcome } from '../storage/sessions.ts';
import { asObject, parseOrThrow } from '../common/validation.ts';

/**
 * A notification body: any JSON object (the fields below are where readNotification looks; the rest is
 * kept out of the outcome). Lenient on purpose: see the top of this file.
 */
export const NotificationBody = z.record(z.string(), z.unknown(), { error: 'must be a JSON object' }).meta({
  description:
    'verificationStatus decides (OBV_SUCCESS_STATUSES / OBV_FAILURE_STATUSES); a success carries ' +
    'accountToken, accountLabel, fiName, fiAccountType inside `account` or at the top level; a failure errorCode/errorMessage ' +
    'or error.code/error.message; merchant.merchantTransactionId and verificationId must match the session.',
});

/** The words `verificationStatus` may take (compared case-insensitively), from the configuration. */
export interface StatusWords {
  success: readonly string[];
  failure: readonly string[];
}

/** A success before the proxy gives it a link reference. */
export interface ReportedSuccess {
  status: 'success';
  accountToken: string;
  accountLabel: string;
  fiName: string;
  fiAccountType: string;
}

/** What a notification body reports, plus the ids it says it belongs to (checked against the session). */
export interface ReportedNotification {
  outcome: ReportedSuccess | FailureOutcome;
  merchantTransactionId: string | undefined;
  verificationId: string | undefined;
}

/** 422 for a notification the proxy will not store; the route logs it at error, for the merchant to see. */
function unusable(detail: string, path: string, message: string): ProblemError {
  return problem('unusable-notification', detail, { errors: [{ path, message }] });
}

/** The first candidate that is a non-empty string (numbers are accepted and stringified). */
function firstText(...candidates: unknown[]): string | undefined {
  for (const candidate of candidates) {
    if (typeof candidate === 'number' && Number.isFinite(candidate)) return String(candidate);
    if (typeof candidate === 'string' && candidate.trim() !== '') return candidate.trim();
  }
  return undefined;
}

/** ASCII case-insensitive: `toUpperCase` alone would also fold look-alikes such as "ſUCCESS" into a word. */
const includes = (words: readonly string[], status: string) =>
  /^[A-Za-z0-9_-]{1,40}$/.test(status) && words.some((word) => word.toUpperCase() === status.toUpperCase());

/** Parses a notification body; 400 when it is not an object, 422 when its status is unknown or a success lacks its token. */
export function readNotification(body: unknown, words: StatusWords): ReportedNotification {
  const top = parseOrThrow(NotificationBody, body, 'The notification body');
  const account = asObject(top.account);
  const error = asObject(top.error);
  const status = firstText(top.verificationStatus) ?? '';
  const ids = {
    merchantTransactionId: firstText(asObject(top.merchant).merchantTransactionId),
    verificationId: firstText(top.verificationId),
  };
  if (includes(words.success, status)) {
    const accountToken = firstText(account.accountToken, top.accountToken);
    if (accountToken === undefined) {
      throw unusable(
        `verificationStatus is ${status} but the notification carries no accountToken.`,
        'account.accountToken',
        'required when verificationStatus reports a success',
      );
    }
    return {
      ...ids,
      outcome: {
        status: 'success',
        accountToken,
        accountLabel: firstText(account.accountLabel, top.accountLabel) ?? '',
        fiName: firstText(account.fiName, top.fiName) ?? '',
        fiAccountType: firstText(account.fiAccountType, top.fiAccountType) ?? '',
      },
    };
  }
  if (includes(words.failure, status)) {
    const code = firstText(top.errorCode, error.code) ?? 'UNKNOWN_ERROR';
    return { ...ids, outcome: { status: 'failure', code, message: firstText(top.errorMessage, error.message) ?? '' } };
  }
  if (status === '') {
    throw problem('validation', 'The notification has no verificationStatus.', {
      errors: [{ path: 'verificationStatus', message: 'is required' }],
    });
  }
  throw unusable(
    `verificationStatus "${status.slice(0, 40)}" is neither a success (${words.success.join(', ')}) nor a failure (${words.failure.join(', ')}); set OBV_SUCCESS_STATUSES / OBV_FAILURE_STATUSES if the provider spells them differently.`,
    'verificationStatus',
    'is not a known status',
  );
}
