// Remembers the session a tab is waiting on, so a reload while the consumer is at the bank resumes it
// instead of losing the outcome. sessionStorage: per tab, gone when the tab closes.
import { readStartedSession, type StartedSession } from './session-client.ts';

/** One key per element name and proxy, so two elements on a page never pick up each other's session. */
export function pendingKey(name: string, proxyUrl: URL): string {
  return `obv-link-account:${name}:${proxyUrl.href}`;
}

/** What a remembered session was started for: it is resumed only into the same purchase. */
export type Purchase = string;

/** The remembered session, if it was started for `purchase` (storage can be unavailable, e.g. in a sandboxed frame). */
export function loadPending(key: string, purchase: Purchase): StartedSession | undefined {
  try {
    const value = JSON.parse(sessionStorage.getItem(key) ?? 'null') as { for?: unknown } | null;
    return value?.for === purchase ? readStartedSession(value) : undefined;
  } catch {
    return undefined;
  }
}

/** Stores the session with the purchase it was started for, or forgets it when there is none. */
export function savePending(key: string, session?: StartedSession, purchase?: Purchase): void {
  try {
    if (session) sessionStorage.setItem(key, JSON.stringify({ ...session, for: purchase }));
    else sessionStorage.removeItem(key);
  } catch {
    // Without storage a reload loses the session; the flow itself still works.
  }
}
