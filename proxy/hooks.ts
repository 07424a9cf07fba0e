// The hooks a merchant may give createObvProxy, and what they receive: `enrichStart` completes the
// upstream request before a verification starts, `onOutcome` hears every stored outcome,
// `onSavedAccountRemoved` hears a shopper remove a saved account at checkout.
import type { Request } from 'express';
import type { VerificationOutcome } from './storage/sessions.ts';
import type { SavedAccountDisplay } from './storage/saved-accounts.ts';

/**
 * Lets the merchant's code name the purchase of a start without a link token from its own session
 * (consumer details, the amount in the cart, its user id) before it is validated and sent: the draft
 * holds only the proxy's defaults (an `obv-…` order id, USD, the element's language). Return the
 * request to send.
 * `merchant.returnURL`, `merchant.notificationURL` and `countryCode` are set again afterwards. To
 * re-verify an account the merchant keeps, set `accountToken` here (the page can never send one).
 */
export type EnrichStart = (req: Request, request: VerificationDraft) => VerificationDraft | Promise<VerificationDraft>;

/** The upstream request before validation: any field may still be missing. */
export type VerificationDraft = {
  accountToken?: string | undefined;
  countryCode: string;
  consumer: Record<string, unknown>;
  merchant: Record<string, string | undefined>;
  transaction: Record<string, string | undefined>;
};

/** What the merchant's `onOutcome` hook receives: the whole outcome, token included (server side only). */
export interface OutcomeReport {
  sessionId: string;
  merchantUserId: string | undefined;
  merchantTransactionId: string | undefined;
  amount: string | undefined;
  currency: string | undefined;
  /** The outcome; a success's `savedAccount` is the account saved for the user (store it). */
  outcome: VerificationOutcome;
  /** Set when the shopper chose a saved account (no bank step): its stable id. */
  savedAccountId?: string;
}

/** Called once per session when its outcome is stored, whether or not the shopper is still on the page. */
export type OnOutcome = (report: OutcomeReport) => void | Promise<void>;

/**
 * Called once when a shopper removes a saved account in the element (after confirming): delete it from
 * your records. If it throws, the removal is refused (500) and the account stays offered.
 */
export type OnSavedAccountRemoved = (removal: SavedAccountRemoval) => void | Promise<void>;

/** What the merchant's server hears when a shopper removes a saved account (`onSavedAccountRemoved`, and merchant events). */
export interface SavedAccountRemoval extends SavedAccountDisplay {
  merchantUserId: string;
  /** The saved account's stable id: delete your record of it. */
  accountId: string;
  /** The sealed string as your server passed it in the link session. */
  sealed: string;
  /** The order whose checkout it was removed from. */
  merchantTransactionId: string;
  /** ISO 8601. */
  removedAt: string;
}
