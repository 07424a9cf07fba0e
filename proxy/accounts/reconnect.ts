// A reconnect (a link session that re-authorizes a stale saved account) can end with another account:
// the shopper signs in at the bank and picks whatever account they like. The provider names an account
// only by its token, which a re-verification keeps, and its display fields (docs/UPSTREAM.md D21): the
// proxy takes the account for the same one only when all three display fields match. Only then is the
// saved account renewed under its id; any other account is a new saved account (own id, own consent,
// or none), and the stale one stays as it was.
import type { SavedAccountDisplay } from '../storage/saved-accounts.ts';

/** Case, surrounding and repeated spaces aside: a bank may send "CHECKING" once and "Checking" the next time. */
const normal = (value: string) => value.normalize('NFKC').trim().replace(/\s+/g, ' ').toUpperCase();

/** The same account, by the only fields the provider names one with: bank, type and masked number. */
export function sameAccount(saved: SavedAccountDisplay, linked: SavedAccountDisplay): boolean {
  return (
    normal(saved.fiName) === normal(linked.fiName) &&
    normal(saved.fiAccountType) === normal(linked.fiAccountType) &&
    normal(saved.accountLabel) === normal(linked.accountLabel)
  );
}
