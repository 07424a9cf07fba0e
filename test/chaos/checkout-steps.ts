// The steps both single-instance chaos runs share (durable.ts: one instance SIGKILLed and restarted;
// failover.ts: the database failed over under three instances): a bounded retry while the proxy or its
// storage is away, and the merchant's payment with its Idempotency-Key, as a real shop retries it.
import { INSTANCE_MERCHANT_API_KEY } from './cluster.ts';

export const API = { 'content-type': 'application/json', authorization: `Bearer ${INSTANCE_MERCHANT_API_KEY}` };

const STEP_LIMIT_MS = 30_000;

/**
 * Retries `step` while the proxy is down, busy or failing over (bounded); undefined when it never answered.
 * A refused, cut or timed-out request counts as no answer.
 */
export async function retrying<T>(step: () => Promise<T | undefined>, limitMs = STEP_LIMIT_MS): Promise<T | undefined> {
  const deadline = Date.now() + limitMs;
  for (let delay = 50; Date.now() < deadline; delay = Math.min(delay * 2, 500)) {
    try {
      const value = await step();
      if (value !== undefined) return value;
    } catch {
      // Connection refused or cut: the instance or its storage is going away or coming back.
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
  return undefined;
}

/**
 * Pays `order` (10.00 USD) with `linkRef` through `baseUrl()` (asked again on each try: another instance may
 * answer), retrying with the same Idempotency-Key for up to 40 s. The transaction id of a 201; 'unknown' when
 * the first payment's result is unknown after a kill (409, reconciled by the caller); undefined otherwise.
 * `key`: the Idempotency-Key (a new one pays an order again after it was reconciled as not charged).
 */
export function payOrder(
  baseUrl: () => string,
  order: string,
  linkRef: string,
  merchantUserId: string,
  key = `pay-${order}`,
): Promise<string | undefined> {
  return retrying(async () => {
    const response = await fetch(`${baseUrl()}/obv/transactions`, {
      method: 'POST',
      headers: { ...API, 'idempotency-key': key },
      body: JSON.stringify({ linkRef, merchantUserId, merchantTransactionId: order, amount: '10.00', currency: 'USD' }),
      signal: AbortSignal.timeout(5_000),
    });
    if (response.status === 201) return ((await response.json()) as { transactionId: string }).transactionId;
    // 409: in progress (wait), or the first payment's result is unknown after a kill.
    if (
      response.status === 409 &&
      ((await response.json()) as { payment?: { state?: string } }).payment?.state === 'unknown'
    )
      return 'unknown';
    return undefined;
  }, 40_000);
}
