// Event ids. Most events get a random one; an event that must happen once whatever retries or instances
// emit it (a session's end, an order's payment) gets one derived from what it is about, so every emitter
// computes the same id and the outbox keeps the first.
import { createHash } from 'node:crypto';
import { pooledRandomBytes } from '../common/random.ts';

export function randomEventId(): string {
  return `evt_${pooledRandomBytes(16).toString('base64url').slice(0, 22)}`;
}

/**
 * The id of the one event about `subject` (`session-end:{sessionId}`, `payment:{order}`). A hash: the
 * subject (a session id is a capability) cannot be read back from the id the merchant sees.
 */
export function eventIdFor(subject: string): string {
  return `evt_${createHash('sha256').update(`obv-link:event:${subject}`).digest('base64url').slice(0, 22)}`;
}
