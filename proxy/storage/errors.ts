// The one error a session backend throws for "I cannot be reached right now". It is backend-neutral on
// purpose: http/problem.ts maps it to a 503 with Retry-After without knowing whether sessions live in
// Redis or elsewhere, and a merchant's own SessionStore can throw it to get the same answer.

/**
 * The session store or result bus could not do its work because its backend is unreachable (down,
 * restarting, out of memory, timing out). Transient: the same request may succeed a few seconds later,
 * which is why it becomes `503` + `Retry-After` (the provider retries its notification on it).
 *
 * The message says what failed in words safe to log; connection URLs (which may hold a password) are
 * never part of it.
 */
export class SessionBackendUnavailableError extends Error {
  override name = 'SessionBackendUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
