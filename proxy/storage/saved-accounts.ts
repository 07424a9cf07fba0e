// The stored shapes of saved accounts: what a success saves for the merchant user (sealed, with the
// shopper's consent), what a reconnect says of the account it was for, and the consent record. A session's
// outcome and its start carry them (sessions.ts), the merchant events carry them (events.ts), and what is
// read back is parsed with these schemas (session-codec.ts). accounts/ makes and opens them.
import { z } from 'zod';
import { describes } from '../common/validation.ts';

/** The display fields every saved account carries in the clear beside its seal. */
export interface SavedAccountDisplay {
  accountLabel: string;
  fiName: string;
  fiAccountType: string;
}

/** The saved account a re-authorizing start was for: its id and what it showed. */
export interface ReconnectTarget extends SavedAccountDisplay {
  accountId: string;
}

/** What a reconnect's success says about the saved account it was for (link.succeeded, GET /links, onOutcome). */
export interface ReconnectResult {
  /** The saved account the link session re-authorized. */
  accountId: string;
  /** True when the bank linked another account: that saved account was not renewed (it is still stale). */
  differentAccount: boolean;
}

/**
 * The record of a shopper's consent to save an account: the exact words shown and their version, when,
 * and from where (the IP address and user agent of the request that started the linking).
 */
export interface ConsentRecord {
  version: string;
  lang: 'en' | 'es';
  /** The checkbox's label and the whole authorization (`text`, then `details`), exactly as shown. */
  checkbox: string;
  text: string;
  /** ISO 8601. */
  acceptedAt: string;
  /** The starting request's client address, canonical (`consentAddress`); '' when it was not an IP address. */
  ip: string;
  /** The starting request's User-Agent, printable and at most CONSENT_USER_AGENT_MAX characters (`consentUserAgent`). */
  userAgent: string;
}

/**
 * A saved account as the merchant's server receives it (GET /links/{linkRef}, `onOutcome`, merchant
 * events) and stores it: `sealed` goes back to the proxy in a link session's `savedAccounts` or
 * `reauthorize`; the rest is for the merchant's own pages and records.
 */
export interface SavedAccount extends SavedAccountDisplay {
  /** Opaque (AES-256-GCM under the proxy's sealing keys), bound to the merchant user. Never give it to a browser. */
  sealed: string;
  /** Stable id of this saved account, the same after a re-authorization: key your records by it. */
  accountId: string;
  /** ISO 8601: when the shopper linked (or last re-authorized) the account. */
  linkedAt: string;
  /**
   * What the shopper agreed to when saving it; absent after a re-authorization (the first consent stands)
   * unless the shopper ticked the box again on that reconnect.
   */
  consent?: ConsentRecord;
  /** True when this replaces a stale saved account with the same `accountId` (a reconnect that linked the same account). */
  reauthorized?: true;
}

/**
 * A consent record as the proxy stores it (a start's `saving`, a success's saved account): the address and
 * user agent, personal data, sealed like a token (sealing/sealed-outcome.ts), the words in the clear.
 */
export interface StoredConsentRecord extends Omit<ConsentRecord, 'ip' | 'userAgent'> {
  /** `{ip, userAgent}` as JSON, sealed. */
  sealedClient: string;
}

/** A saved account as a stored outcome keeps it: its consent's address and user agent sealed. */
export interface StoredSavedAccount extends Omit<SavedAccount, 'consent'> {
  /** A record written before the address and user agent were sealed holds them in the clear (read as it is). */
  consent?: StoredConsentRecord | ConsentRecord;
}

// Each schema is checked against its type at compile time (`describes`): a field added to one alone fails the build.
const ConsentRecordSchema = describes<ConsentRecord>()(
  z.strictObject({
    version: z.string(),
    lang: z.enum(['en', 'es']),
    checkbox: z.string(),
    text: z.string(),
    acceptedAt: z.string(),
    ip: z.string(),
    userAgent: z.string(),
  }),
);

/** A saved account as stored with a success's outcome (the Redis backend parses what it reads back). */
export const SavedAccountSchema = describes<SavedAccount>()(
  z.strictObject({
    sealed: z.string(),
    accountId: z.string(),
    accountLabel: z.string(),
    fiName: z.string(),
    fiAccountType: z.string(),
    linkedAt: z.string(),
    consent: ConsentRecordSchema.optional(),
    reauthorized: z.literal(true).optional(),
  }),
);

const StoredConsentRecordSchema = describes<StoredConsentRecord>()(
  z.strictObject({
    ...ConsentRecordSchema.omit({ ip: true, userAgent: true }).shape,
    sealedClient: z.string(),
  }),
);

/** What a consent's sealed address and user agent open to. */
export const ConsentClientSchema = ConsentRecordSchema.pick({ ip: true, userAgent: true });

/** A saved account as stored with a success's outcome: strict, so a consent's address in the clear is refused. */
export const StoredSavedAccountSchema = describes<StoredSavedAccount>()(
  z.strictObject({
    ...SavedAccountSchema.omit({ consent: true }).shape,
    consent: z.union([StoredConsentRecordSchema, ConsentRecordSchema]).optional(),
  }),
);

/** A reconnect's result as stored with a success's outcome and sent to the merchant (reconnect.ts). */
export const ReconnectResultSchema = describes<ReconnectResult>()(
  z.strictObject({
    accountId: z.string().meta({ description: 'The saved account the link session re-authorized' }),
    differentAccount: z.boolean().meta({
      description:
        'True when the bank linked another account: that saved account was not renewed and still needs re-authorizing',
    }),
  }),
);
