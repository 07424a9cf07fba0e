// Signed notifications as the provider sends them (docs/CONTRACTS.md §1, endpoint 3), built in the load
// generator. Signing uses node:crypto rather than the standardwebhooks package so the client's cost per
// request stays small beside the server's.
import { createHmac } from 'node:crypto';

/** The sandbox's documented webhook secret (docs/CONTRACTS.md §1). */
export const WEBHOOK_SECRET = 'whsec_c2FuZGJveC13ZWJob29rLXNlY3JldC1vYnYtbGluaw==';

const key = Buffer.from(WEBHOOK_SECRET.slice('whsec_'.length), 'base64');

/** Standard Webhooks headers for `body`, signed with the sandbox secret. */
export function signedHeaders(webhookId: string, body: string, timestampSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
  const signature = createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64');
  return {
    'content-type': 'application/json',
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}

/** A success notification body, shaped like the sandbox's. */
export function successNotification(index: number): string {
  return JSON.stringify({
    verificationId: `bench-verification-${index}`,
    verificationStatus: 'SUCCESS',
    merchant: { merchantId: 'bench-merchant', merchantUserId: `user-${index}`, merchantTransactionId: `txn-${index}` },
    transaction: { amount: '49.99', currency: 'USD', product: 'bench' },
    account: {
      accountToken: `acct-bench-${index}`,
      accountLabel: 'Checking ••••4321',
      fiName: 'Sandbox Federal Bank',
      fiAccountType: 'CHECKING',
    },
  });
}
