// Talking to the sandbox provider directly, as a merchant without obv-link would: the baselines of the
// start overhead and of the token count. Paths and bodies per docs/CONTRACTS.md §1.
import { expectStatus, type SequentialClient } from './http-client.ts';

const TOKEN_PATH = '/exp/auth/mint/v1/oauth2/token?grant_type=client_credentials&scope=obv/token-request';
const VERIFICATION_PATH = '/exp/ext/mint/ooes/v1/obv';
const BASIC = `Basic ${Buffer.from('sandbox_client:sandbox_secret').toString('base64')}`;

export const CONSUMER = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

/** Endpoint 1: a bearer token for the documented sandbox client. */
export async function fetchToken(provider: SequentialClient): Promise<string> {
  const response = await provider.request('POST', TOKEN_PATH, '', {
    'content-type': 'application/x-www-form-urlencoded',
    authorization: BASIC,
  });
  expectStatus(response, 200, 'token request');
  return (JSON.parse(response.body) as { access_token: string }).access_token;
}

/** Endpoint 2 with the request the proxy would build for the same start. */
export async function startVerificationDirectly(provider: SequentialClient, token: string, index: number, callbackBase: string): Promise<void> {
  const response = await provider.request(
    'POST',
    VERIFICATION_PATH,
    {
      countryCode: 'US',
      consumer: CONSUMER,
      merchant: {
        merchantId: 'bench-merchant',
        merchantUserId: `user-${index}`,
        merchantTransactionId: `txn-${index}`,
        returnURL: `${callbackBase}/return/direct-${index}`,
        notificationURL: `${callbackBase}/notifications/direct-${index}`,
      },
      transaction: { amount: '49.99', currency: 'USD', product: 'ACH', originatorIp: '127.0.0.1' },
    },
    { authorization: `Bearer ${token}` },
  );
  expectStatus(response, 200, 'direct verification request');
}

/** POST /obv/verifications as the element sends it. */
export async function startThroughProxy(proxy: SequentialClient, index: number): Promise<void> {
  const response = await proxy.request(
    'POST',
    '/obv/verifications',
    { merchantUserId: `user-${index}`, merchantTransactionId: `txn-${index}`, amount: '49.99', currency: 'USD', consumer: CONSUMER },
    { origin: proxy.origin },
  );
  expectStatus(response, 201, 'start through the proxy');
}
