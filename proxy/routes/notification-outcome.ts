// Reads the outcome out of a notification body, leniently (DESIGN.md): the account fields inside
// `account` or at the top level; the error as errorCode/errorMessage or error.code/error.message.
// Classification is by content: an accountToken means success, an error code or message failure.
import { z } from 'zod';
import { ValidationProblem } from '../errors.ts';
import type { VerificationOutcome } from '../sessions/types.ts';
import { parseOrThrow } from './problem.ts';

const JsonObject = z.record(z.string(), z.unknown(), { error: 'must be a JSON object' });

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The first candidate that is a non-empty string (numbers are accepted and stringified). */
function firstText(...candidates: unknown[]): string | undefined {
  for (const candidate of candidates) {
    if (typeof candidate === 'number' && Number.isFinite(candidate)) return String(candidate);
    if (typeof candidate === 'string' && candidate.trim() !== '') return candidate.trim();
  }
  return undefined;
}

/** The outcome a notification body reports; a 400 ValidationProblem when it reports none. */
export function outcomeOfNotification(body: unknown): VerificationOutcome {
  const top = parseOrThrow(JsonObject, body, 'The notification body');
  const account = asObject(top.account);
  const error = asObject(top.error);
  const accountToken = firstText(account.accountToken, top.accountToken);
  if (accountToken !== undefined) {
    return {
      status: 'success',
      accountToken,
      accountLabel: firstText(account.accountLabel, top.accountLabel) ?? '',
      fiName: firstText(account.fiName, top.fiName) ?? '',
      fiAccountType: firstText(account.fiAccountType, top.fiAccountType) ?? '',
    };
  }
  const code = firstText(top.errorCode, error.code);
  const message = firstText(top.errorMessage, error.message);
  if (code !== undefined || message !== undefined) {
    return { status: 'failure', code: code ?? 'UNKNOWN_ERROR', message: message ?? '' };
  }
  throw new ValidationProblem('The notification carries neither an accountToken (success) nor an error code or message (failure).', [
    { path: 'account.accountToken', message: 'required for a successful verification' },
    { path: 'errorCode', message: 'required (with errorMessage) for a failed verification' },
  ]);
}
