// Remembers the session a tab is waiting on, so a reload while the consumer is at the bank resumes it
// instead of losing the outcome, and the session whose account is linked, so a reload shows it again
// (read from the proxy: the link reference is never stored). sessionStorage: per tab, gone when the tab closes.
import { readStartedSession, type StartedSession } from './session-client.ts';

/** One key per element name and proxy, so two elements on a page never pick up each other's session. */
export function pendingKey(name: string, proxyUrl: URL): string {
  return `obv-link-account:${name}:${proxyUrl.href}`;
}

/** What a remembered session was started for: it is resumed only into the same purchase. */
export type Purchase = string;

/** A remembered session; `done`: its account was linked. */
export type RememberedSession = StartedSession & { done?: boolean };

/** The remembered session, if it was started for `purchase` (storage can be unavailable, e.g. in a sandboxed frame). */
export function loadPending(key: string, purchase: Purchase): RememberedSession | undefined {
  try {
    const value = JSON.parse(sessionStorage.getItem(key) ?? 'null') as { for?: unknown } | null;
    // Checked (an id, an http(s) consumerUrl), then taken as stored: with `done`.
    return value?.for === purchase && readStartedSession(value) ? (value as RememberedSession) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Stores the session with the purchase it was started for, or forgets it when there is none. A linked
 * one (`done`) only for a link session: without one, the next purchase in this tab would show an account
 * whose reference may have paid.
 */
export function savePending(key: string, session?: StartedSession, purchase?: Purchase, done?: boolean): void {
  try {
    if (session && (purchase || !done))
      sessionStorage.setItem(key, JSON.stringify({ ...session, for: purchase, done }));
    else sessionStorage.removeItem(key);
  } catch {
    // Without storage a reload loses the session; the flow itself still works.
  }
}
