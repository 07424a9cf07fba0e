// The demo shop's own "database" of its shoppers' saved accounts, in memory: what a merchant keeps so a
// returning shopper pays in one click. It stores what the proxy hands over — the sealed string (useless
// without the proxy's key, bound to the shopper), the display fields and the consent record — never a
// token, and passes the sealed strings back in the next checkout's link session.

/** A saved account as the shop keeps it (the proxy's `savedAccount`, see docs/RETURNING-SHOPPERS.md). */
export interface SavedAccountRecord {
  sealed: string;
  accountId: string;
  accountLabel: string;
  fiName: string;
  fiAccountType: string;
  linkedAt: string;
  /** The shopper's consent as the proxy recorded it: the words shown, their version, when, IP, user agent. */
  consent?: Record<string, unknown> | undefined;
  /** The bank refused a payment with it (`reauthorization-required`): offered as Reconnect until renewed. */
  stale?: true;
}

/** At most this many saved accounts per shopper, and shoppers remembered. */
const MAX_PER_SHOPPER = 5;
const MAX_SHOPPERS = 1000;

export class SavedAccountBook {
  readonly #byShopper = new Map<string, SavedAccountRecord[]>();

  /** The shopper's saved accounts, newest first. */
  list(merchantUserId: string): SavedAccountRecord[] {
    return this.#byShopper.get(merchantUserId) ?? [];
  }

  /**
   * Saves an account for the shopper, or replaces the one with its `accountId` (the proxy keeps the id of
   * an account saved again, and of a reconnected one: one row per bank account). The copy saved is fresh,
   * never stale.
   */
  save(merchantUserId: string, account: SavedAccountRecord): void {
    const earlier = this.list(merchantUserId).find((a) => a.accountId === account.accountId);
    // A re-authorization brings no new consent: the first one stands.
    const { stale: _stale, ...fresh } = account;
    const record = { ...fresh, consent: account.consent ?? earlier?.consent };
    const others = this.list(merchantUserId).filter((a) => a.accountId !== account.accountId);
    this.#byShopper.delete(merchantUserId);
    this.#byShopper.set(merchantUserId, [record, ...others].slice(0, MAX_PER_SHOPPER));
    while (this.#byShopper.size > MAX_SHOPPERS) this.#byShopper.delete(this.#byShopper.keys().next().value!);
  }

  /** The bank wants the shopper to sign in again before this account pays (until a reconnect renews it). */
  markStale(merchantUserId: string, accountId: string): void {
    const account = this.list(merchantUserId).find((a) => a.accountId === accountId);
    if (account) account.stale = true;
  }

  /** The shopper removed it at checkout (the proxy's onSavedAccountRemoved). */
  remove(merchantUserId: string, accountId: string): void {
    const left = this.list(merchantUserId).filter((a) => a.accountId !== accountId);
    this.#byShopper.set(merchantUserId, left);
  }
}
