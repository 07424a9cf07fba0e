// Signed notifications as the provider sends them (docs/CONTRACTS.md §1, endpoint 3), built in the load
// generator, and the baseline's check of them. Both use node:crypto's native HMAC rather than the
// standardwebhooks package (pure-JavaScript SHA-256): the client's cost per request stays small, and
// the baseline does the check as cheaply as it can be done.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The sandbox's documented webhook secret (docs/CONTRACTS.md §1). */
export const WEBHOOK_SECRET = 'whsec_c2FuZGJveC13ZWJob29rLXNlY3JldC1vYnYtbGluaw==';

const key = Buffer.from(WEBHOOK_SECRET.slice('whsec_'.length), 'base64');

const TOLERANCE_SECONDS = 5 * 60;

function sign(webhookId: string, timestampSeconds: number, body: string): string {
  return createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64');
}

/** Standard Webhooks headers for `body`, signed with the sandbox secret. */
export function signedHeaders(
  webhookId: string,
  body: string,
  timestampSeconds = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const signature = sign(webhookId, timestampSeconds, body);
  return {
    'content-type': 'application/json',
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}

/**
 * The Standard Webhooks check (timestamp within 5 minutes, one `v1,` signature matching in constant
 * time), as the baseline server does it. True when `body` may be trusted.
 */
export function hasValidSignature(body: string, headers: Record<string, string | string[] | undefined>): boolean {
  const [id, timestamp, signatures] = [
    headers['webhook-id'],
    headers['webhook-timestamp'],
    headers['webhook-signature'],
  ];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  const seconds = Number.parseInt(timestamp, 10);
  if (!(Math.abs(Math.floor(Date.now() / 1000) - seconds) <= TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(sign(id, seconds, body));
  return signatures.split(' ').some((versioned) => {
    const [version, signature = ''] = versioned.split(',');
    const candidate = Buffer.from(signature);
    return version === 'v1' && candidate.length === expected.length && timingSafeEqual(candidate, expected);
  });
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
