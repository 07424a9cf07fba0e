// Talking to the sandbox provider directly, as a merchant without obv-link would: the baselines of the
// start overhead and of the token count. Paths and bodies per docs/CONTRACTS.md §1.
import { expectStatus, type SequentialClient } from './http-client.ts';

const TOKEN_PATH = '/exp/auth/mint/v1/oauth2/token?grant_type=client_credentials&scope=obv/token-request';
const VERIFICATION_PATH = '/exp/ext/mint/ooes/v1/obv';
const BASIC = `Basic ${Buffer.from('sandbox_client:sandbox_secret').toString('base64')}`;

/** What the merchant's server names in a link session (docs/CONTRACTS.md §3); the page sends only its token. */
export interface Purchase {
  merchantUserId: string;
  merchantTransactionId: string;
  amount: string;
  currency: string;
  consumer: { firstName: string; lastName: string; email: string };
}

/** The purchase of the `index`th benchmark start. */
export function purchase(index: number): Purchase {
  return {
    merchantUserId: `user-${index}`,
    merchantTransactionId: `txn-${index}`,
    amount: '49.99',
    currency: 'USD',
    consumer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
  };
}

/** Endpoint 2's request for `start`, as the proxy builds it (per-session callback URLs under `callbackBase`). */
export function verificationRequest(start: Purchase, callbackBase: string, ref: string): unknown {
  return {
    countryCode: 'US',
    consumer: start.consumer,
    merchant: {
      merchantId: 'bench-merchant',
      merchantUserId: start.merchantUserId,
      merchantTransactionId: start.merchantTransactionId,
      returnURL: `${callbackBase}/return/${ref}`,
      notificationURL: `${callbackBase}/notifications/${ref}`,
    },
    transaction: { amount: start.amount, currency: start.currency, product: 'ACH', originatorIp: '127.0.0.1' },
  };
}

/** Endpoint 1: a bearer token for the documented sandbox client. */
export async function fetchToken(provider: SequentialClient): Promise<string> {
  const response = await provider.request('POST', TOKEN_PATH, '', {
    'content-type': 'application/x-www-form-urlencoded',
    authorization: BASIC,
  });
  expectStatus(response, 200, 'token request');
  return (JSON.parse(response.body) as { access_token: string }).access_token;
}

/** Endpoint 2 with a bearer; resolves with the consumerUrl. */
export async function postVerification(provider: SequentialClient, token: string, request: unknown): Promise<string> {
  const response = await provider.request('POST', VERIFICATION_PATH, request, { authorization: `Bearer ${token}` });
  expectStatus(response, 200, 'verification request to the provider');
  return (JSON.parse(response.body) as { consumerUrl: string }).consumerUrl;
}

/**
 * POST {path} as the element sends it, with a link token the server made beforehand (the proxy's
 * /obv/verifications, or the bare forwarder's).
 */
export async function startThrough(server: SequentialClient, path: string, linkToken: string): Promise<void> {
  const response = await server.request('POST', path, { linkToken }, { origin: server.origin });
  expectStatus(response, 201, `start through ${server.origin}${path}`);
}
