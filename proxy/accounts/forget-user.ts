// Forgetting a merchant user (an erasure request): `proxy.forgetUser` and DELETE /users/{merchantUserId}.
// What the proxy holds of a user goes, on every backend: the saved accounts (every one sealed for the user
// until now is refused from then on, those the proxy never saw included: a cut-off kept in place of the
// user's removals), the sessions and link sessions (outcomes, consent records, the consumer's name and
// e-mail), the saved accounts and consent records in merchant events; payments keep only what a
// reconciliation needs (storage/forgotten.ts). The merchant's server hears of each saved account the proxy
// knew of by the same `saved_account.removed` a shopper's Remove sends, and deletes its own copies.
import type { Logger } from 'pino';
import { z } from 'zod';
import { describes, text } from '../common/validation.ts';
import type { MerchantEvents } from '../events/events.ts';
import type { LinkSessionRecord, LinkSessionStore } from '../storage/link-sessions.ts';
import type { EventOutbox } from '../storage/outbox.ts';
import type { PaymentStore } from '../storage/payments.ts';
import type { RemovalStore } from '../storage/removals.ts';
import type { SavedAccountDisplay } from '../storage/saved-accounts.ts';
import type { SessionRecord, SessionStore } from '../storage/sessions.ts';
import { OfferedAccount } from './offer.ts';
import { savedAccountRemovedKey } from './choice.ts';

export interface ForgetUserDeps {
  sessions: Pick<SessionStore, 'forgetUser'>;
  linkSessions: Pick<LinkSessionStore, 'forgetUser'>;
  payments: Pick<PaymentStore, 'forgetUser'>;
  outbox: Pick<EventOutbox, 'forgetUser'>;
  removals: Pick<RemovalStore, 'forgetUser'>;
  events: Pick<MerchantEvents, 'emit'>;
  logger: Logger;
  now: () => number;
}

/** What forgetting a user erased, counted (never the data itself). A second call counts 0 everywhere. */
export interface ForgottenUser {
  /** Saved accounts the proxy held for the user (in sessions and link sessions), each told as `saved_account.removed`. */
  savedAccounts: number;
  /** Verification sessions deleted, with their outcomes and consent records. */
  sessions: number;
  /** Link sessions deleted, with the consumer's name and e-mail. */
  linkSessions: number;
  /** Payment records reduced to what a reconciliation needs. */
  payments: number;
  /** Merchant events whose saved account and consent record were erased. */
  events: number;
  /** Saved-account removals erased (the cut-off stands for them). */
  removals: number;
}

export type ForgetUser = (merchantUserId: string) => Promise<ForgottenUser>;

/** The user id as a link session takes it (link-sessions/link-sessions.ts `merchantUserId`). */
export const MerchantUserId = text(100);

const count = (description: string) => z.int().min(0).meta({ description });

/** DELETE /users/{merchantUserId}'s answer (the OpenAPI document's). */
export const ForgottenUserSchema = describes<ForgottenUser>()(
  z.strictObject({
    savedAccounts: count('Saved accounts the proxy held for the user, each told as `saved_account.removed`'),
    sessions: count('Verification sessions deleted, with their outcomes and consent records'),
    linkSessions: count("Link sessions deleted, with the consumer's name and e-mail"),
    payments: count('Payment records reduced to what a reconciliation needs'),
    events: count('Merchant events whose saved account and consent record were erased'),
    removals: count("Saved-account removals erased (the user's cut-off stands for them)"),
  }),
);

/** A saved account found in a forgotten record, with the order it was found at. */
interface FoundAccount extends SavedAccountDisplay {
  accountId: string;
  merchantTransactionId: string;
}

export function createForgetUser(deps: ForgetUserDeps): ForgetUser {
  return async (merchantUserId) => {
    // The cut-off first: from here on no saved account sealed for the user opens, whatever the steps
    // below come to. Each step is durable before it resolves, and repeats harmlessly: a retry after a
    // crash finishes the work. (A crash after the records are deleted and before their events are
    // recorded loses those events, not the erasure: the merchant asked for all of the user's accounts.)
    const removals = await deps.removals.forgetUser(merchantUserId, new Date(deps.now()).toISOString());
    const sessions = await deps.sessions.forgetUser(merchantUserId);
    const linkSessions = await deps.linkSessions.forgetUser(merchantUserId);
    const payments = await deps.payments.forgetUser(merchantUserId);
    const events = await deps.outbox.forgetUser(merchantUserId);
    const accounts = savedAccountsIn(sessions, linkSessions);
    for (const account of accounts) {
      const { accountId, accountLabel, fiName, fiAccountType, merchantTransactionId } = account;
      // Under the key a shopper's Remove uses: one saved_account.removed per account, whoever removed it.
      await deps.events.emit(
        'saved_account.removed',
        { merchantUserId, accountId, accountLabel, fiName, fiAccountType, merchantTransactionId, reason: 'forgotten' },
        { once: savedAccountRemovedKey(merchantUserId, accountId) },
      );
    }
    const forgotten: ForgottenUser = {
      savedAccounts: accounts.length,
      sessions: sessions.length,
      linkSessions: linkSessions.length,
      payments,
      events,
      removals,
    };
    deps.logger.info(forgotten, 'merchant user forgotten');
    return forgotten;
  };
}

/** The saved accounts the forgotten records held, once each: saved by a success, chosen, or offered. */
function savedAccountsIn(sessions: SessionRecord[], linkSessions: LinkSessionRecord[]): FoundAccount[] {
  const found = new Map<string, FoundAccount>();
  const add = (account: SavedAccountDisplay & { accountId: string }, order: string | undefined) => {
    const { accountId, accountLabel, fiName, fiAccountType } = account;
    if (!found.has(accountId))
      found.set(accountId, { accountId, accountLabel, fiName, fiAccountType, merchantTransactionId: order ?? '' });
  };
  for (const session of sessions) {
    const outcome = session.outcome?.status === 'success' ? session.outcome : undefined;
    if (outcome?.savedAccount) add(outcome.savedAccount, session.merchantTransactionId);
    if (outcome && session.savedAccountId)
      add({ ...outcome, accountId: session.savedAccountId }, session.merchantTransactionId);
  }
  for (const linkSession of linkSessions) {
    const offered = [linkSession.savedAccounts, linkSession.reauthorize].flat();
    for (const account of offered) {
      const parsed = OfferedAccount.safeParse(account);
      if (parsed.success) add(parsed.data, linkSession.merchantTransactionId);
    }
  }
  return [...found.values()];
}
