// The bank sends the consumer back to the return page (GET /return/:returnRef, routes/return-page.ts): the
// session moves to `returned` (told to the element's sockets), and a session whose bank step is bound is
// decided here (bank-step.ts `bankStepReturn`): a browser without its binding cookie ends it as completed
// elsewhere (nothing is ever released); the browser holding the cookie and the URL's proof is back from
// the bank, and the step is confirmed at once (its outcome delivered from here when it is stored, by the
// notification when it comes later); the cookie without the proof counts only once the outcome is stored
// and its grace has passed ("Finishing…", reloading, until then).
import type { Logger } from 'pino';
import { ProblemError } from '../common/errors.ts';
import { ID_PATTERN, sessionLogRef } from '../common/ids.ts';
import { WarningLimiter } from '../common/log-limits.ts';
import { safeError } from '../common/logger.ts';
import { markerKey } from '../storage/markers.ts';
import type { ResultBus } from '../storage/result-bus.ts';
import { CANCELLED_CODE, type SessionRecord, type SessionStore } from '../storage/sessions.ts';
import { bankStepDecision, bankStepReturn, type ReturnVerdict } from './bank-step.ts';
import type { CompleteDelivery } from './delivery.ts';
import { provesReturn } from './return-proof.ts';

/**
 * What the return page says: `unknown` (no session has this reference), `cancelled` (at the checkout),
 * `returned` (the bank step is done), or a bound session's verdict that releases nothing to this visit.
 */
export type ReturnPage = 'unknown' | 'cancelled' | 'returned' | Exclude<ReturnVerdict, 'confirmed'>;

export interface ReturnVisitDeps {
  store: Pick<SessionStore, 'get' | 'readMark' | 'mark' | 'settle' | 'markReturned'>;
  bus: Pick<ResultBus, 'publish'>;
  deliver: CompleteDelivery;
  /** OBV_BIND_BANK_STEP: how long after a success a starting browser's return without the proof waits (bank-step.ts). */
  bankStepGraceMs: number;
  logger: Logger;
  now: () => number;
}

/** What the return page knows of its visitor: whether it holds `record`'s binding cookie, and the URL's proof. */
export interface Visitor {
  carriesBinding(record: SessionRecord): boolean;
  /** The return URL's `proof` parameter, as the request carries it. */
  proof: unknown;
}

/** A visit of the return page. */
export type ReturnVisit = (returnRef: string, visitor: Visitor) => Promise<ReturnPage>;

/** Failures of the merchant's hook (delivery.ts), which comes after everything the page needs. */
const MERCHANT_PART = new Set(['outcome-hook-failed', 'outcome-in-progress']);

export function createReturnVisit(deps: ReturnVisitDeps): ReturnVisit {
  const { store, logger } = deps;
  const warnings = new WarningLimiter(logger);

  /**
   * Delivers what the decision released (the success to the page, the merchant's part once confirmed, or
   * the failure BANK_STEP_ELSEWHERE), read again from the store: a notification that stored the outcome
   * while this visit was being decided is seen here, or sees the decision itself. Each step is idempotent:
   * a step that fails here (the store) is logged and finished by the next visit (the "Finishing…" page
   * reloads), a notification of the same outcome or a payment. The merchant's onOutcome hook runs last, after
   * the page's part (the link index, the result on the sockets): a hook that fails, or runs on another
   * delivery right now, is the merchant's part to finish (a payment, `GET /links`, the events' expiry
   * check; link.succeeded is recorded before it), never a reason to hold the shopper's page.
   */
  async function deliverDecided(sessionId: string): Promise<boolean> {
    const current = await store.get(sessionId);
    if (!current?.outcome) return true;
    return deps.deliver(current).then(
      () => true,
      (error: unknown) => {
        if (error instanceof ProblemError && MERCHANT_PART.has(error.slug)) return true;
        logger.warn(
          { err: safeError(error), session: sessionLogRef(sessionId) },
          "the bank step's outcome could not be delivered from the return page yet; the next visit or notification finishes it",
        );
        return false;
      },
    );
  }

  /** pending → returned, told to the element's sockets. */
  async function markReturned(before: SessionRecord): Promise<void> {
    const after = await store.markReturned(before.sessionId);
    if (before.state === 'pending' && after?.state === 'returned') {
      await deps.bus.publish({ type: 'state', sessionId: before.sessionId, state: 'returned' });
    }
  }

  return async (returnRef, visitor) => {
    const sessionId = ID_PATTERN.test(returnRef) ? await store.readMark(markerKey.returnRef(returnRef)) : undefined;
    const before = sessionId === undefined ? undefined : await store.get(sessionId);
    if (!before) return 'unknown';
    // The consumer cancelled at the checkout: whatever the bank says now, no account is linked.
    if (before.outcome?.status === 'failure' && before.outcome.code === CANCELLED_CODE) return 'cancelled';
    if (before.browserBinding) {
      const withBinding = visitor.carriesBinding(before);
      const proven = withBinding && provesReturn(before, visitor.proof);
      // Whether this visit, with the cookie and without the proof, is the one that waited for the grace.
      const waitedForGrace =
        withBinding &&
        !proven &&
        before.returnProof !== undefined &&
        (await bankStepDecision(store, before)) === undefined;
      const verdict = await bankStepReturn(store, {
        record: before,
        withBinding,
        proven,
        now: deps.now(),
        graceMs: deps.bankStepGraceMs,
      });
      // Shown or released (the success), or ended (BANK_STEP_ELSEWHERE): delivered once, whoever visits.
      const delivered = verdict === 'finishing' || verdict === 'expired' || (await deliverDecided(before.sessionId));
      if (verdict === 'other-browser' && provesReturn(before, visitor.proof)) {
        // The proof reaches only the provider and, through the bank's redirect, the browser that signed in.
        // Here it came back without the cookie, after the step was confirmed for the browser that started:
        // either the proof reached someone else too (a provider that shows the returnURL to whoever opens
        // consumerUrl; the shopper's own return link opened in another browser), or the browser that signed
        // in came back after the grace of a return without the proof. The operator should know.
        warnings.warn(
          'proof-after-confirmed',
          { session: sessionLogRef(before.sessionId) },
          "the return URL's proof came back in a browser that did not start, after the bank step was confirmed for the one that did: if this repeats, check that the provider never shows the returnURL before the bank step ends",
        );
      }
      if (verdict === 'elsewhere') {
        warnings.warn(
          'other-browser',
          { session: sessionLogRef(before.sessionId) },
          'the bank step came back in a browser that did not start it: completed elsewhere, nothing is released',
        );
      }
      if (verdict === 'confirmed' && waitedForGrace) {
        // The starting browser, without the proof its return URL carried: a provider that drops the URL's
        // query costs every shopper the grace.
        warnings.warn(
          'no-proof',
          { session: sessionLogRef(before.sessionId) },
          "the starting browser came back without the return URL's proof and waited for the grace; if every return does, check that the provider keeps the returnURL's query",
        );
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
