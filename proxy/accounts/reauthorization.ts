// A stale account: endpoint 4 refuses its token until the shopper signs in at the bank again. The API
// description does not say how the provider shows it; the proxy treats an error code listed in
// OBV_REAUTHORIZATION_CODES as that signal (docs/UPSTREAM.md D20) and answers the merchant's server a
// problem of its own, `reauthorization-required`, naming the account, so it can make a link session
// that re-authorizes it.
import { problem, type ProblemError } from '../common/errors.ts';
import type { SessionRecord, VerificationOutcome } from '../storage/sessions.ts';
import { asObject } from '../common/validation.ts';

type Success = Extract<VerificationOutcome, { status: 'success' }>;

/** The provider's error code in a refusal body (`errorCode`, `code` or `error.code`), when it is one of `codes`. */
export function reauthorizationCode(body: Record<string, unknown>, codes: readonly string[]): string | undefined {
  const candidates = [body.errorCode, body.code, asObject(body.error).code];
  const code = candidates.find((value): value is string => typeof value === 'string' && value !== '');
  return code !== undefined && codes.some((known) => known.toUpperCase() === code.toUpperCase()) ? code : undefined;
}

/** The saved account id of the account a stale link reference paid with, when it is a saved account. */
export function staleAccountId(record: SessionRecord, outcome: Success): string | undefined {
  return record.savedAccountId ?? outcome.savedAccount?.accountId;
}

/** 422 `reauthorization-required`, naming the account (its saved account id when it is one) and the provider's code. */
export function reauthorizationRequired(record: SessionRecord, outcome: Success, providerCode: string): ProblemError {
  const accountId = staleAccountId(record, outcome);
  const { accountLabel, fiName, fiAccountType } = outcome;
  return problem(
    'reauthorization-required',
    `The bank needs the shopper to sign in again before ${fiName} ${accountLabel} can be debited: create a link session with reauthorize set to this saved account.`,
    {
      errors: [{ path: 'linkRef', message: 'its account must be re-authorized by the shopper' }],
      extensions: {
        account: { ...(accountId ? { accountId } : {}), accountLabel, fiName, fiAccountType },
        providerCode,
      },
    },
  );
}
