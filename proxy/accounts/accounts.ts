// Returning shoppers' saved accounts, as one service: opening the sealed accounts a link session passes
// (offer.ts), what the element is offered, finding and removing one (choice.ts), and whether a success is
// saved for the merchant user (saving.ts). It knows a link session only by the fields it reads
// (`OfferingLinkSession`), so link-sessions/ stands on it, never the other way round.
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config/schema.ts';
import type { MerchantEvents } from '../events/events.ts';
import type { Sealer } from '../sealing/sealer.ts';
import type { RemovalStore } from '../storage/removals.ts';
import type { SessionRecord, VerificationOutcome } from '../storage/sessions.ts';
import { findOffered, removeSavedAccount, type OnSavedAccountRemoved, type SavedAccountRemoval } from './choice.ts';
import {
  offerView,
  openOfferedAccounts,
  refuseForgotten,
  refuseRemoved,
  type OfferedAccount,
  type OfferingLinkSession,
  type OfferView,
} from './offer.ts';
import { reopenSavedAccountToken } from './saved-account.ts';
import {
  savedAccountFor,
  savingFor,
  stillKnown,
  tokenToReauthorize,
  type ShopperClient,
  type SuccessSaving,
} from './saving.ts';

export interface SavedAccountsDeps {
  config: Pick<ProxyConfig, 'merchantName'>;
  sealer: Sealer;
  removals: RemovalStore;
  events: Pick<MerchantEvents, 'emit'>;
  /** The merchant's hook, called once when a shopper removes a saved account. */
  onSavedAccountRemoved?: OnSavedAccountRemoved | undefined;
  logger: Logger;
  now: () => number;
}

/** The saved accounts a link session's sealed strings open to: offered under ids of their own. */
export interface OpenedAccounts {
  savedAccounts?: OfferedAccount[];
  reauthorize?: OfferedAccount;
}

export interface SavedAccounts {
  /**
   * Opens a new link session's saved accounts for `merchantUserId`: 422 naming each one that does not open
   * (another user's, altered, under an unknown key), 410 naming each one the shopper removed before.
   */
  open(
    merchantUserId: string,
    input: { savedAccounts?: string[] | undefined; reauthorize?: string | undefined },
  ): Promise<OpenedAccounts>;
  /** What the element is offered for `session` (POST /saved-accounts/offer). */
  offer(session: OfferingLinkSession): Promise<OfferView>;
  /** The offered account the browser names; 404 when there is none, or the shopper removed it. */
  find(session: OfferingLinkSession, offeredId: string): Promise<OfferedAccount>;
  /** The shopper removed `offered`: remembered for good, the merchant told (its hook, then an event). */
  remove(session: OfferingLinkSession, offered: OfferedAccount): Promise<SavedAccountRemoval>;
  /** The token of an offered account, to pay with it; 422 when its key was dropped since the link session. */
  tokenOf(session: OfferingLinkSession, offered: OfferedAccount): string;
  /**
   * A start's `saving` (consent, or the account it reconnects), from the shopper's choice, with the user's
   * saved accounts it may renew (those the shopper removed left out).
   */
  saving(
    session: OfferingLinkSession,
    client: ShopperClient,
    consentVersion: string | undefined,
    another?: boolean,
  ): Promise<SessionRecord['saving']>;
  /** The saved account's token a re-authorizing start sends upstream (none when the shopper chose another account). */
  tokenToReauthorize(session: OfferingLinkSession, another?: boolean): string | undefined;
  /** What a success saves for `record`'s merchant user, when its start asked for it. */
  savedAccountFor(
    record: SessionRecord,
    outcome: Omit<Extract<VerificationOutcome, { status: 'success' }>, 'linkRef'>,
  ): SuccessSaving;
}

export function createSavedAccounts(deps: SavedAccountsDeps): SavedAccounts {
  return {
    async open(merchantUserId, input) {
      // Opened now, so a saved account that is not this user's is refused to the server, never offered.
      const opened = openOfferedAccounts(deps, merchantUserId, input);
      await refuseRemoved(deps, merchantUserId, opened);
      await refuseForgotten(deps, merchantUserId, input);
      return opened;
    },
    offer: (session) => offerView(deps, session),
    find: (session, offeredId) => findOffered(deps, session, offeredId),
    remove: (session, offered) => removeSavedAccount(deps, session, offered),
    tokenOf: (session, offered) =>
      reopenSavedAccountToken(deps.sealer, offered.sealed, session.merchantUserId, 'This saved account', {
        path: 'savedAccountId',
        message: 'cannot be opened',
      }),
    async saving(session, client, consentVersion, another) {
      const saving = savingFor(deps, client, session, consentVersion, another);
      if (saving?.known) saving.known = await stillKnown(deps.removals, session.merchantUserId, saving.known);
      return saving;
    },
    tokenToReauthorize: (session, another) => tokenToReauthorize(deps, session, another),
    savedAccountFor: (record, outcome) => savedAccountFor(deps, record, outcome),
  };
}
