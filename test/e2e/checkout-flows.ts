// Checkouts against a proxy process (test/chaos/cluster.ts ProxyProcess) as its clients make them: the
// merchant's server makes a link session, the page starts the verification, the shopper signs in at the
// sandbox bank (the provider then notifies the proxy), the page reads the link reference, the merchant's
// server pays. Each step reports what the proxy answered, so a test under faults can tell what was
// acknowledged from what was refused. Used by the suites that load a proxy while something happens to
// its storage (a backup, a full disk).
import { INSTANCE_MERCHANT_API_KEY, postLinkSession } from '../chaos/cluster.ts';
import { CHECKOUT, signInAtBank } from '../node/redis/cluster.ts';
import { lookupSession } from '../helpers/session-requests.ts';

export const API = { authorization: `Bearer ${INSTANCE_MERCHANT_API_KEY}` };

/** What one checkout got to, and the first answer that stopped it. */
export interface Checkout {
  order: string;
  sessionId?: string;
  /** The provider's id of its verification (from the bank's URL): its notifications carry it. */
  verificationId?: string;
  linkRef?: string;
  /** The payment the proxy answered 201 for. */
  paid?: { transactionId: string; at: number };
  /** The answer that stopped the checkout (status and problem type), if one did. */
  refused?: { step: string; status: number; type?: string; retryAfter?: string | null };
}

async function refusal(step: string, response: Response): Promise<Checkout['refused']> {
  const body = await response.text();
  let type: string | undefined;
  try {
    type = (JSON.parse(body) as { type?: string }).type;
  } catch {
    // Not a problem document.
  }
  return { step, status: response.status, type, retryAfter: response.headers.get('retry-after') };
}

/** The link reference once the session's outcome is stored, polling as the page does (bounded). */
async function linkRefOf(url: string, sessionId: string, timeoutMs: number): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const response = await lookupSession(`${url}/obv`, sessionId, { origin: url }).catch(() => undefined);
    if (response?.ok) {
      const outcome = ((await response.json()) as { outcome?: { linkRef?: string } }).outcome;
      if (outcome?.linkRef) return outcome.linkRef;
    } else {
      await response?.body?.cancel();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

export function pay(url: string, order: string, linkRef: string): Promise<Response> {
  return fetch(`${url}/obv/transactions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...API },
    body: JSON.stringify({
      linkRef,
      merchantUserId: CHECKOUT.merchantUserId,
      merchantTransactionId: order,
      amount: CHECKOUT.amount,
      currency: CHECKOUT.currency,
    }),
  });
}

export async function readPayment(
  url: string,
  order: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/obv/transactions/${order}`, { headers: API });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A checkout whose shopper is at the bank: link session made, verification started. */
export interface AtTheBank extends Checkout {
  sessionId: string;
  verificationId: string;
  consumerUrl: string;
}

/** The first half of a checkout: the link session and the start (what the page does before the bank). */
export async function startCheckout(url: string, order: string): Promise<AtTheBank | Checkout> {
  const made = await postLinkSession(url, { ...CHECKOUT, merchantTransactionId: order });
  if (made.status !== 201) return { order, refused: await refusal('link-session', made) };
  const { linkToken } = (await made.json()) as { linkToken: string };
  const started = await fetch(`${url}/obv/verifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ linkToken }),
  });
  if (started.status !== 201) return { order, refused: await refusal('start', started) };
  const { sessionId, consumerUrl } = (await started.json()) as { sessionId: string; consumerUrl: string };
  return { order, sessionId, consumerUrl, verificationId: new URL(consumerUrl).pathname.split('/').at(-1)! };
}

/**
 * The second half: the shopper signs in at the bank (the provider notifies the proxy), the page reads
 * the link reference (waiting at most `linkWaitMs`), the merchant's server pays.
 */
export async function finishCheckout(url: string, atTheBank: AtTheBank, linkWaitMs = 10_000): Promise<Checkout> {
  const { consumerUrl: _url, ...result } = atTheBank;
  await signInAtBank(atTheBank.consumerUrl);
  const linkRef = await linkRefOf(url, atTheBank.sessionId, linkWaitMs);
  if (!linkRef) return { ...result, refused: { step: 'notification', status: 0 } };
  const paid = await pay(url, result.order, linkRef);
  if (paid.status !== 201) return { ...result, linkRef, refused: await refusal('pay', paid) };
  const { transactionId } = (await paid.json()) as { transactionId: string };
  return { ...result, linkRef, paid: { transactionId, at: Date.now() } };
}

/**
 * One checkout on the proxy at `url`, from link session to payment; stops at the first answer that is not
 * the expected one, and says which. `linkWaitMs` bounds the wait for the notification.
 */
export async function checkout(url: string, order: string, linkWaitMs = 10_000): Promise<Checkout> {
  const started = await startCheckout(url, order);
  return 'consumerUrl' in started ? finishCheckout(url, started, linkWaitMs) : started;
}
