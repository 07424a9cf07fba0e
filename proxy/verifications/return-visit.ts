// The bank sends the consumer back to the return page (GET /return/:returnRef, routes/return-page.ts): the
// session moves to `returned` (told to the element's sockets), and a session whose bank step is bound is
// decided here (bank-step.ts `bankStepReturn`): a browser without its binding cookie ends it as completed
// elsewhere (nothing is ever released); the browser holding the cookie confirms it only once the outcome
// is stored and its grace has passed ("Finishing…", reloading, until then), and its success is then
// delivered from here.
import type { Logger } from 'pino';
import { ID_PATTERN, sessionLogRef } from '../common/ids.ts';
import { WarningLimiter } from '../common/log-limits.ts';
import { safeError } from '../common/logger.ts';
import { markerKey } from '../storage/markers.ts';
import type { ResultBus } from '../storage/result-bus.ts';
import { CANCELLED_CODE, type SessionRecord, type SessionStore } from '../storage/sessions.ts';
import { bankStepReturn, type ReturnVerdict } from './bank-step.ts';
import type { CompleteDelivery } from './delivery.ts';

/**
 * What the return page says: `unknown` (no session has this reference), `cancelled` (at the checkout),
 * `returned` (the bank step is done), or a bound session's verdict that releases nothing to this visit.
 */
export type ReturnPage = 'unknown' | 'cancelled' | 'returned' | Exclude<ReturnVerdict, 'confirmed'>;

export interface ReturnVisitDeps {
  store: Pick<SessionStore, 'get' | 'readMark' | 'mark' | 'settle' | 'markReturned'>;
  bus: Pick<ResultBus, 'publish'>;
  deliver: CompleteDelivery;
  /** OBV_BIND_BANK_STEP: how long after a success a starting browser's return waits before it confirms. */
  bankStepGraceMs: number;
  logger: Logger;
  now: () => number;
}

/** A visit of the return page: `carriesBinding` tells whether this browser holds `record`'s binding cookie. */
export type ReturnVisit = (returnRef: string, carriesBinding: (record: SessionRecord) => boolean) => Promise<ReturnPage>;

export function createReturnVisit(deps: ReturnVisitDeps): ReturnVisit {
  const { store, logger } = deps;
  const warnings = new WarningLimiter(logger);

  /**
   * Delivers what the decision released (the success, or the failure BANK_STEP_ELSEWHERE), read again
   * from the store. Each step is idempotent: a step that fails here (the onOutcome hook, the store) is
   * logged and finished by the next visit (the "Finishing…" page reloads) or a notification of the same
   * outcome.
   */
  async function deliverDecided(sessionId: string): Promise<boolean> {
    const current = await store.get(sessionId);
    if (!current?.outcome) return true;
    return deps.deliver(current).then(() => true, (error: unknown) => {
      logger.warn({ err: safeError(error), session: sessionLogRef(sessionId) },
        'the bank step\'s outcome could not be delivered from the return page yet; the next visit or notification finishes it');
      return false;
    });
  }

  /** pending → returned, told to the element's sockets. */
  async function markReturned(before: SessionRecord): Promise<void> {
    const after = await store.markReturned(before.sessionId);
    if (before.state === 'pending' && after?.state === 'returned') {
      await deps.bus.publish({ type: 'state', sessionId: before.sessionId, state: 'returned' });
    }
  }

  return async (returnRef, carriesBinding) => {
    const sessionId = ID_PATTERN.test(returnRef) ? await store.readMark(markerKey.returnRef(returnRef)) : undefined;
    const before = sessionId === undefined ? undefined : await store.get(sessionId);
    if (!before) return 'unknown';
    // The consumer cancelled at the checkout: whatever the bank says now, no account is linked.
    if (before.outcome?.status === 'failure' && before.outcome.code === CANCELLED_CODE) return 'cancelled';
    if (before.browserBinding) {
      const withBinding = carriesBinding(before);
      const verdict = await bankStepReturn(store, { record: before, withBinding, now: deps.now(), graceMs: deps.bankStepGraceMs });
      // Released (the success) or ended (BANK_STEP_ELSEWHERE): delivered once, whoever visits.
      const delivered = verdict === 'finishing' || verdict === 'expired' || (await deliverDecided(before.sessionId));
      if (verdict === 'elsewhere') {
        warnings.warn('other-browser', { session: sessionLogRef(before.sessionId) },
          'the bank step came back in a browser that did not start it: completed elsewhere, nothing is released');
      }
      if (verdict !== 'confirmed' || !delivered) {
        if (withBinding && verdict === 'finishing') await markReturned(before);
        return verdict === 'confirmed' ? 'finishing' : verdict;
      }
    }
    await markReturned(before);
    return 'returned';
  };
}
