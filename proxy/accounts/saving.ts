// Whether a verification's success is saved for the merchant user, decided when it starts: the link
// session re-authorizes a saved account (the success replaces it, same account id), or it allows saving
// and the shopper ticked the consent box (the start names the version of the words it showed).
import type { Request } from 'express';
import type { ProxyContext } from '../context.ts';
import type { LinkSession } from '../link-sessions/link-sessions.ts';
import type { SessionRecord, VerificationOutcome } from '../sessions/types.ts';
import { validationProblem } from '../validation.ts';
import { consentAddress, consentUserAgent, consentWords } from './consent.ts';
import { newAccountId, reopenSavedAccountToken, sealSavedAccount, type SavedAccount } from './saved-account.ts';

/** `record.saving` for a start from `session` with the shopper's consent choice (`consentVersion` when ticked). */
export function savingFor(ctx: ProxyContext, req: Request, session: LinkSession, consentVersion: string | undefined): SessionRecord['saving'] {
  if (session.reauthorize) return { accountId: session.reauthorize.accountId, reauthorized: true };
  if (consentVersion === undefined) return undefined;
  const refuse = (message: string) => validationProblem('The request body', [{ path: 'consent', message }]);
  if (!session.allowSaving) throw refuse('is not accepted: this link session does not allow saving the account (allowSaving)');
  const words = consentWords(session.language);
  if (consentVersion !== words.version) throw refuse(`must be the version of the consent words the element showed (${words.version})`);
  return {
    accountId: newAccountId(),
    consent: {
      version: words.version,
      lang: words.lang,
      checkbox: words.checkbox,
      text: words.text,
      acceptedAt: new Date(ctx.now()).toISOString(),
      ip: consentAddress(req.ip),
      userAgent: consentUserAgent(req.get('user-agent')),
    },
  };
}

/** The token of the saved account a re-authorizing link session names (it opened when the session was made). */
export function tokenToReauthorize(ctx: ProxyContext, session: LinkSession): string | undefined {
  if (!session.reauthorize) return undefined;
  return reopenSavedAccountToken(ctx.sealer, session.reauthorize.sealed, session.merchantUserId, 'The saved account to re-authorize',
    { path: 'linkToken', message: 'names a saved account that cannot be opened' });
}

type Success = Extract<VerificationOutcome, { status: 'success' }>;

/** The saved account a success makes for `record`'s merchant user, when its start asked for one. */
export function savedAccountFor(ctx: ProxyContext, record: SessionRecord, outcome: Omit<Success, 'linkRef'>): SavedAccount | undefined {
  const { saving, merchantUserId } = record;
  if (!saving || !merchantUserId) return undefined;
  const { accountToken, accountLabel, fiName, fiAccountType } = outcome;
  const linkedAt = new Date(ctx.now()).toISOString();
  const sealed = sealSavedAccount(ctx.sealer, { accountId: saving.accountId, accountToken, merchantUserId, accountLabel, fiName, fiAccountType, linkedAt });
  return {
    sealed,
    accountId: saving.accountId,
    accountLabel,
    fiName,
    fiAccountType,
    linkedAt,
    ...(saving.consent ? { consent: saving.consent } : {}),
    ...(saving.reauthorized ? { reauthorized: true as const } : {}),
  };
}
