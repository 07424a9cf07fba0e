// Names of the session store's one-time markers (MarkerStore.mark), in one place so no two features can
// collide on a key, and how long a session-bound marker lives. Markers hold only short-lived facts bound
// to one session; business records (link sessions, payments, removals) have repositories (storage/).
import type { SessionRecord } from './sessions.ts';
import { RECORD_GRACE_MS } from '../config/limits.ts';

export const markerKey = {
  /** webhook-id → the session it was first delivered for (de-duplication across sessions). */
  webhook: (webhookId: string) => `webhook:${webhookId}`,
  /** Return reference (in `returnURL`) → session id. */
  returnRef: (ref: string) => `return:${ref}`,
  /** Link reference (what the browser holds) → session id. */
  linkRef: (ref: string) => `link:${ref}`,
  /**
   * Session id → how its bound bank step ended (verifications/bank-step.ts): `confirmed` (the starting browser
   * came back: with the return URL's proof at once, without it once the grace after the outcome passed) or
   * `elsewhere` (a browser without the binding came back first). Set once.
   */
  bankStep: (sessionId: string) => `bank-step:${sessionId}`,
  /** Session id → `confirmed` once the shopper confirmed a saved account chosen on a page (`awaitsConfirmation`). */
  choiceConfirmed: (sessionId: string) => `choice-confirmed:${sessionId}`,
  /**
   * Session id → when (epoch ms) the starting browser first came back from the bank, proven: written only by
   * releases before 2026-11-29, which confirmed such a step at the grace's end. Read so that a session in
   * flight across the upgrade is shown its success and confirmed (verifications/bank-step.ts `isBack`).
   */
  bankStepBack: (sessionId: string) => `bank-step-back:${sessionId}`,
  /** Session id → when (epoch ms) the proxy first saw the session's outcome stored: the return grace starts there. */
  bankStepOutcomeAt: (sessionId: string) => `bank-step-outcome:${sessionId}`,
  /** Session id → `done` once the merchant's `onOutcome` hook has returned for it. */
  outcomeHandled: (sessionId: string) => `outcome:${sessionId}`,
  /** Session id → the delivery whose `onOutcome` call is running (a lease: a crash frees it in time). */
  outcomeRunning: (sessionId: string) => `outcome-running:${sessionId}`,
  /** Written (and expired at once) to prove the store takes writes: /readyz, the outage log (outage-log.ts). */
  writeProbe: 'probe:write',
} as const;

/** A marker bound to a session lives as long as the session's record. */
export function sessionMarkerTtlMs(record: Pick<SessionRecord, 'expiresAt'>, now: number): number {
  return Math.max(1, record.expiresAt - now) + RECORD_GRACE_MS;
}
