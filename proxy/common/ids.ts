import { pooledRandomBytes } from './random.ts';

/** 128 random bits, base64url: session ids and notification references. */
export function newId(): string {
  return pooledRandomBytes(16).toString('base64url');
}

/** What a session id or reference looks like; anything else is answered 404 without a store lookup. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;

/**
 * How a session appears in logs: its first 8 characters. The whole id is a bearer capability (it reads
 * the session's outcome, accountToken included), so it stays out of logs like any other secret; 48 bits
 * are plenty to correlate log lines and leave 80 unguessable bits.
 */
export function sessionLogRef(sessionId: string): string {
  return `${sessionId.slice(0, 8)}…`;
}

/** A request path fit for logs: no query, and every id-shaped segment cut to its log reference. */
export function pathForLog(url: string): string {
  const path = url.split('?')[0] ?? '';
  return path
    .split('/')
    .map((segment) => (ID_PATTERN.test(segment) ? sessionLogRef(segment) : segment))
    .join('/');
}
