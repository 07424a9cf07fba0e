// Test events, like a payment provider's CLI `trigger`: a correctly signed sample of each merchant event
// type, sent straight to OBV_EVENTS_URL (not recorded, not listed, not retried), so a merchant can try its
// handler without a whole bank step. Every sample is built through the same strict schemas as real
// events and carries data no real order has (`order-test-0001`, `user-test`).
import { randomEventId } from './ids.ts';
import { buildEvent, EVENT_TYPES, type EventData, type EventType, type MerchantEvent } from '../storage/events.ts';
import { createEventSigner } from './signing.ts';

const ORDER = {
  merchantUserId: 'user-test',
  merchantTransactionId: 'order-test-0001',
  amount: '49.99',
  currency: 'USD',
};
const ACCOUNT = { accountLabel: 'Checking ••••4321', fiName: 'Sandbox Federal Bank', fiAccountType: 'CHECKING' };
const PAYMENT = { paymentId: 'pay_test_0001', linkRef: 'test-link-reference-0001' };

/** A sample of each type's data (test data: no real user, order, reference or account). */
const SAMPLES: { [Type in EventType]: EventData<Type> } = {
  'link.succeeded': { ...ORDER, linkRef: PAYMENT.linkRef, ...ACCOUNT },
  'link.failed': { ...ORDER, code: 'ACCOUNT_LOCKED', message: 'The account is locked at the bank.' },
  'link.cancelled': { ...ORDER },
  'link.expired': { ...ORDER, expiredAt: '2026-01-01T00:30:00.000Z' },
  'payment.succeeded': { ...ORDER, ...PAYMENT, transactionId: 'txn_test_0001', transactionStatus: 'APPROVED' },
  'payment.failed': {
    ...ORDER,
    ...PAYMENT,
    code: 'PAYMENT_REFUSED',
    message: 'The payment service refused the payment; nothing was charged.',
  },
  'payment.unknown': {
    ...ORDER,
    ...PAYMENT,
    reason: 'The payment service did not answer; it may have charged. Check with the provider and record the result.',
  },
  'reauthorization.required': {
    merchantUserId: ORDER.merchantUserId,
    ...ACCOUNT,
    code: 'REAUTHORIZATION_REQUIRED',
    accountId: 'sa_test_0001',
    merchantTransactionId: ORDER.merchantTransactionId,
  },
  'saved_account.removed': {
    merchantUserId: ORDER.merchantUserId,
    ...ACCOUNT,
    accountId: 'sa_test_0001',
    merchantTransactionId: ORDER.merchantTransactionId,
    reason: 'shopper',
  },
};

export interface TestEventResult {
  event: MerchantEvent;
  /** The endpoint's HTTP status, or undefined when it could not be reached. */
  status: number | undefined;
  /** Why it failed (a status outside 2xx, a network error, no answer within 10 s). */
  error?: string;
}

export interface TestEventTarget {
  eventsUrl: string;
  eventsSecrets: readonly string[];
  now?: () => number;
  timeoutMs?: number;
}

/** Sends one signed sample of `type` (each type when undefined) to the events endpoint, one after the other. */
export async function sendTestEvents(target: TestEventTarget, type?: EventType): Promise<TestEventResult[]> {
  const sign = createEventSigner(target.eventsSecrets);
  const now = target.now ?? Date.now;
  const results: TestEventResult[] = [];
  for (const each of type ? [type] : EVENT_TYPES) {
    const event = buildEvent(randomEventId(), each, SAMPLES[each] as EventData<typeof each>, now());
    const body = JSON.stringify(event);
    try {
      const response = await fetch(target.eventsUrl, {
        method: 'POST',
        headers: {
          ...sign(event.id, body, now()),
          'content-type': 'application/json',
          'user-agent': 'obv-link-proxy (test event)',
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(target.timeoutMs ?? 10_000),
      });
      await response.body?.cancel().catch(() => undefined);
      const ok = response.status >= 200 && response.status < 300;
      results.push({ event, status: response.status, ...(ok ? {} : { error: `answered ${response.status}` }) });
    } catch (error) {
      results.push({ event, status: undefined, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return results;
}
