// What forgetting a merchant user (accounts/forget-user.ts) leaves of the records that outlive it, the same
// on every backend: each backend finds the user's records its own way, and rewrites them with these.
import type { MerchantEvent } from './events.ts';
import type { PaymentRecord } from './payments.ts';

/**
 * The `accountId` of the removal row that stands for a forgotten user's cut-off (removals.ts
 * `forgetUser`): saved account ids are `sa_…`, never empty, so no shopper's removal can take its place.
 */
export const FORGOTTEN_USER = '';

/**
 * A payment of a forgotten user, as kept for reconciliation: the order, the amounts, the states, the
 * provider's ids and answer, the dates, the link reference (a random handle, its session erased) and what
 * an Idempotency-Key replay compares. The user id goes; the account's label, bank and type become ''.
 */
export function forgottenPayment(record: PaymentRecord): PaymentRecord {
  const { merchantUserId: _user, ...kept } = record;
  return { ...kept, accountLabel: '', fiName: '', fiAccountType: '' };
}

/**
 * An event of a forgotten user as the outbox keeps it, or undefined when it holds nothing to erase: a
 * `link.succeeded` loses its `savedAccount` (the sealed string and the consent record, with the
 * shopper's address and user agent), so no delivery or catch-up hands a forgotten account back. The user
 * id stays: it is the merchant's own key for its customer, which every event names.
 */
export function forgottenEvent(event: MerchantEvent): MerchantEvent | undefined {
  if (event.type !== 'link.succeeded' || event.data.savedAccount === undefined) return undefined;
  const { savedAccount: _saved, ...data } = event.data;
  return { ...event, data };
}

/** Whether `event` is about `merchantUserId`. */
export const namesUser = (event: MerchantEvent, merchantUserId: string): boolean =>
  event.data.merchantUserId === merchantUserId;
