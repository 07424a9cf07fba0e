// The sandbox's documented fixtures: who may ask for tokens and which test consumers produce which
// outcome. docs/CONTRACTS.md §1 publishes these tables; keep the two in step.

/** The realm named in `WWW-Authenticate` challenges. */
export const SANDBOX_REALM = 'obv-sandbox';

/** The only scope endpoint 1 grants (docs/UPSTREAM.md#d2-token-parameters). */
export const TOKEN_SCOPE = 'obv/token-request';

/** Standard Webhooks secret the sandbox signs notifications with: base64 of `sandbox-webhook-secret-obv-link`. */
export const DEFAULT_WEBHOOK_SECRET = 'whsec_c2FuZGJveC13ZWJob29rLXNlY3JldC1vYnYtbGluaw==';

/**
 * How a client's authorization stands. Each value exists so that one RFC 6749 error the provider lists
 * can be reached with a documented client.
 */
export type ClientStanding = 'active' | 'revoked' | 'unauthorized';

/** A client registered with the sandbox's authorization server. */
export interface SandboxClient {
  clientId: string;
  clientSecret: string;
  standing: ClientStanding;
}

export const SANDBOX_CLIENTS: readonly SandboxClient[] = [
  { clientId: 'sandbox_client', clientSecret: 'sandbox_secret', standing: 'active' },
  { clientId: 'revoked_client', clientSecret: 'revoked_secret', standing: 'revoked' },
  { clientId: 'limited_client', clientSecret: 'limited_secret', standing: 'unauthorized' },
];

/** The display fields a successful verification reports, shown in the merchant's checkout (docs/UPSTREAM.md#endpoint-3-notification). */
export interface BankAccount {
  accountLabel: string;
  fiName: string;
  fiAccountType: string;
}

/** A verification's failure as the notification reports it. */
export interface VerificationFailure {
  errorCode: string;
  errorMessage: string;
}

export const SANDBOX_BANK_NAME = 'Sandbox Federal Bank';

export type ConsumerOutcome =
  { kind: 'success'; account: BankAccount } | { kind: 'failure'; failure: VerificationFailure };

/** A test consumer of the sandbox bank. `password: null` means any password gives the outcome. */
export interface TestConsumer {
  username: string;
  password: string | null;
  outcome: ConsumerOutcome;
}

export const TEST_CONSUMERS: readonly TestConsumer[] = [
  {
    username: 'user_good',
    password: 'pass_good',
    outcome: {
      kind: 'success',
      account: { accountLabel: 'Checking ••••4321', fiName: SANDBOX_BANK_NAME, fiAccountType: 'CHECKING' },
    },
  },
  {
    username: 'user_savings',
    password: 'pass_good',
    outcome: {
      kind: 'success',
      account: { accountLabel: 'Savings ••••8765', fiName: SANDBOX_BANK_NAME, fiAccountType: 'SAVINGS' },
    },
  },
  {
    username: 'user_bad',
    password: null,
    outcome: {
      kind: 'failure',
      failure: { errorCode: 'ACCOUNT_NOT_VERIFIED', errorMessage: 'The bank could not verify this account.' },
    },
  },
  {
    username: 'user_locked',
    password: null,
    outcome: {
      kind: 'failure',
      failure: { errorCode: 'ACCOUNT_LOCKED', errorMessage: 'This account is locked. Contact your bank.' },
    },
  },
];

/** What the Cancel button on the bank page reports. */
export const CONSUMER_CANCELLED: VerificationFailure = {
  errorCode: 'CONSUMER_CANCELLED',
  errorMessage: 'You cancelled the verification at your bank.',
};
