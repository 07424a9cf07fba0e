// Everything the sandbox remembers, in memory and bounded: issued bearer tokens, verifications (one per
// consumerUrl), the accounts it linked (accountToken → account) and transactions. Expired entries are
// swept; each table also drops its oldest entries past `maxEntries`.
import { randomBytes } from 'node:crypto';
import { BoundedMap } from './bounded-map.ts';
import { EXPIRED_TOKEN_MEMORY_MS, EXPIRED_VERIFICATION_MEMORY_MS } from './limits.ts';
import type { BankAccount, VerificationFailure } from './sandbox-data.ts';
import type { VerificationRequest } from './verification-schema.ts';

export interface IssuedToken {
  clientId: string;
  scope: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  revoked: boolean;
}

export type VerificationResult =
  { status: 'SUCCESS'; accountToken: string; account: BankAccount } | ({ status: 'FAILURE' } & VerificationFailure);

export interface Verification {
  verificationId: string;
  /** The `t` of the consumerUrl: whoever holds the URL may use it, once. */
  consumerToken: string;
  clientId: string;
  request: VerificationRequest;
  returnURL: string | undefined;
  notificationURL: string | undefined;
  createdAt: number;
  expiresAt: number;
  result: VerificationResult | undefined;
}

export interface LinkedAccount {
  accountToken: string;
  clientId: string;
  username: string;
  account: BankAccount;
  linkedAt: number;
  /** Marked by the `markAccountStale` test control: endpoint 4 refuses the token until a re-verification. */
  stale?: boolean;
}

export interface RecordedTransaction {
  transactionId: string;
  clientId: string;
  accountToken: string;
  merchantTransactionId: string;
  /** What the request said it charges, as sent (docs/UPSTREAM.md lists only the fields the flow relies on). */
  amount: unknown;
  currency: unknown;
  createdAt: number;
}

/** Opaque random identifier, URL-safe. */
export function randomId(prefix: string, bytes = 16): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

export class ProviderState {
  readonly tokens: BoundedMap<string, IssuedToken>;
  readonly verifications: BoundedMap<string, Verification>;
  readonly accounts: BoundedMap<string, LinkedAccount>;
  readonly transactions: BoundedMap<string, RecordedTransaction>;
  readonly #now: () => number;

  constructor(maxEntries: number, now: () => number) {
    this.tokens = new BoundedMap(maxEntries);
    this.verifications = new BoundedMap(maxEntries);
    this.accounts = new BoundedMap(maxEntries);
    this.transactions = new BoundedMap(maxEntries);
    this.#now = now;
  }

  /** Forgets tokens and verifications long past their lifetime. */
  sweep(): void {
    const now = this.#now();
    this.tokens.sweep((token) => token.expiresAt + EXPIRED_TOKEN_MEMORY_MS < now);
    this.verifications.sweep((verification) => verification.expiresAt + EXPIRED_VERIFICATION_MEMORY_MS < now);
  }
}
