// Shared bits of the Redis tests: records, bounded waiting, a raw client for inspecting keys.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { PaymentRecord } from '../../../proxy/storage/payments.ts';
import { browserOutcome } from '../../../proxy/storage/result-bus.ts';
import { type FailureOutcome, type SessionRecord, type StoredOutcome } from '../../../proxy/storage/sessions.ts';

export const SUCCESS: StoredOutcome = {
  status: 'success',
  linkRef: 'link-ref-0123456789abcdef',
  sealedAccountToken: 'obv1.k1.c2VhbGVkLXRva18xMjM',
  accountLabel: 'Checking ••••4321',
  fiName: 'Sandbox Federal Bank',
  fiAccountType: 'CHECKING',
};

/** SUCCESS as a browser (and the result bus) may see it: no accountToken. */
export const SUCCESS_VIEW = browserOutcome(SUCCESS, undefined);

export const FAILURE: FailureOutcome = {
  status: 'failure',
  code: 'ACCOUNT_NOT_VERIFIED',
  message: 'The bank could not verify this account.',
};

/** FAILURE as a browser (and the result bus) sees it: with the shopper's words. */
export const FAILURE_VIEW = browserOutcome(FAILURE, undefined);

export function randomId(): string {
  return randomBytes(16).toString('hex');
}

/** A fresh pending session that expires `expiresInMs` from now. */
export function pendingRecord(expiresInMs = 30 * 60 * 1000): SessionRecord {
  const now = Date.now();
  return {
    sessionId: randomId(),
    notificationRef: randomId(),
    consumerUrl: 'https://bank.example/consumer/v1?t=abc',
    state: 'pending',
    createdAt: now,
    expiresAt: now + expiresInMs,
    merchantUserId: 'user-1',
    merchantTransactionId: 'txn-1',
  };
}

/** A pending payment of `order` (a fresh one by default), its lease ending 30 s from now. */
export function pendingPayment(order = `order-${randomId()}`): PaymentRecord {
  return {
    paymentId: `pay_${randomId()}`,
    merchantTransactionId: order,
    state: 'pending',
    leaseExpiresAt: Date.now() + 30_000,
    amount: '10.00',
    currency: 'USD',
    accountLabel: 'Checking ****1234',
    fiName: 'Bank',
    fiAccountType: 'checking',
    linkRef: `ref-${randomId()}`,
    paidAt: new Date().toISOString(),
    requestDigest: 'digest',
  };
}

/** A plain client for looking at what the backend wrote (no fail-fast settings needed). */
export function inspector(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  // Tests restart the server under it; the reconnect errors are expected.
  redis.on('error', () => undefined);
  return redis;
}

/**
 * Polls `check` until it returns a value other than undefined, at most `timeoutMs`. Used to wait for
 * things that happen in the background (a reconnect), never to assert on speed.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`condition not met within ${timeoutMs} ms${lastError ? `: ${String(lastError)}` : ''}`);
}
