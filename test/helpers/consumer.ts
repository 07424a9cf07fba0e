// Plays the consumer at the sandbox bank: posts the sign-in form of a consumerUrl with fetch
// (docs/CONTRACTS.md §1 "Consumer page"), without following the redirect to the returnURL.

/** The sandbox's documented test consumers (CONTRACTS §1). */
export const CONSUMERS = {
  good: { username: 'user_good', password: 'pass_good', action: 'signin' },
  savings: { username: 'user_savings', password: 'pass_good', action: 'signin' },
  notVerified: { username: 'user_bad', password: 'any', action: 'signin' },
  locked: { username: 'user_locked', password: 'any', action: 'signin' },
  wrongPassword: { username: 'user_good', password: 'wrong', action: 'signin' },
  cancel: { username: '', password: '', action: 'cancel' },
} as const;

export type ConsumerChoice = keyof typeof CONSUMERS;

/**
 * Submits the bank form for `consumerUrl` (`{base}/consumer/{id}?t=…`). Returns the response: 303 with
 * `location` = returnURL when the verification ended, 422 for a wrong password, 410 when already used.
 */
export async function completeConsumerStep(consumerUrl: string, who: ConsumerChoice = 'good'): Promise<Response> {
  const url = new URL(consumerUrl);
  const token = url.searchParams.get('t') ?? '';
  const { username, password, action } = CONSUMERS[who];
  return fetch(`${url.origin}${url.pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ t: token, username, password, action }),
    redirect: 'manual',
  });
}
