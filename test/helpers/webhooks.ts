// Signs notification bodies the way the provider does (Standard Webhooks), so tests can post their
// own — forged, stale, duplicated or out of order — to the proxy.
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** The sandbox's documented webhook secret (CONTRACTS §1). */
export const SANDBOX_WEBHOOK_SECRET = 'whsec_c2FuZGJveC13ZWJob29rLXNlY3JldC1vYnYtbGluaw==';

export interface SignedNotification {
  body: string;
  headers: Record<string, string>;
}

export function signNotification(
  payload: unknown,
  options: { secret?: string; id?: string; timestamp?: Date } = {},
): SignedNotification {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = options.timestamp ?? new Date();
  const signature = new Webhook(options.secret ?? SANDBOX_WEBHOOK_SECRET).sign(id, timestamp, body);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': signature,
    },
  };
}

/** Posts a signed notification to `url`. */
export async function postNotification(
  url: string,
  payload: unknown,
  options: Parameters<typeof signNotification>[1] = {},
): Promise<Response> {
  const { body, headers } = signNotification(payload, options);
  return fetch(url, { method: 'POST', headers, body });
}

/**
 * The merchant transaction a hand-made notification says it is about: the proxy refuses one that does not
 * match its session, so this is the harness's PURCHASE order unless a test says otherwise.
 */
export const NOTIFIED_ORDER = 'order-1001';

/** A success body as the sandbox sends it (without the sandbox's verificationId, which tests do not know). */
export function successPayload(
  accountToken = `acct_${randomUUID()}`,
  merchantTransactionId = NOTIFIED_ORDER,
): Record<string, unknown> {
  return {
    verificationStatus: 'SUCCESS',
    merchant: { merchantId: 'm-1', merchantUserId: 'u-1', merchantTransactionId },
    transaction: { amount: '49.99', currency: 'USD', product: 'ACH' },
    account: {
      accountToken,
      accountLabel: 'Checking ••••4321',
      fiName: 'Sandbox Federal Bank',
      fiAccountType: 'CHECKING',
    },
  };
}

/** A failure body as the sandbox sends it. */
export function failurePayload(
  code = 'ACCOUNT_NOT_VERIFIED',
  message = 'The bank could not verify this account.',
  merchantTransactionId = NOTIFIED_ORDER,
): Record<string, unknown> {
  return {
    verificationStatus: 'FAILURE',
    merchant: { merchantId: 'm-1', merchantUserId: 'u-1', merchantTransactionId },
    transaction: { amount: '49.99', currency: 'USD', product: 'ACH' },
    account: {},
    errorCode: code,
    errorMessage: message,
  };
}
