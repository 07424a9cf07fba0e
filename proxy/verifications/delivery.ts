// Everything after an outcome is stored: the link reference's index, the result to the element's
// sockets, the session's merchant event and the merchant's onOutcome hook. Each step is idempotent, so a
// provider retry after a failure here runs it again safely: the relay sends at most one result per
// socket, the link index is a marker, the event's id is the session's (recorded once), and the hook is
// marked done only after it returned. A success whose bank step is bound (bank-step.ts) goes out only once
// the step is confirmed (its starting browser came back from the bank); until then nothing of it leaves
// the store. A saved account chosen on a page goes to its page at once, and to the merchant once the
// shopper confirmed it (saved-choice.ts).
import type { Logger } from 'pino';
import { problem } from '../common/errors.ts';
import { safeError } from '../common/logger.ts';
import { newId, sessionLogRef } from '../common/ids.ts';
import type { MerchantEvents } from '../events/events.ts';
import type { Sealer } from '../sealing/sealer.ts';
import { openOutcome } from '../sealing/sealed-outcome.ts';
import { markerKey, sessionMarkerTtlMs } from '../storage/markers.ts';
import { browserOutcome, type ResultBus } from '../storage/result-bus.ts';
import type { SessionRecord, SessionStore, VerificationOutcome } from '../storage/sessions.ts';
import { OUTCOME_HOOK_LEASE_MS } from '../config/limits.ts';
import { settleBankStep } from './bank-step.ts';

/** What the merchant's `onOutcome` hook receives: the whole outcome, token included (server side only). */
export interface OutcomeReport {
  sessionId: string;
  merchantUserId: string | undefined;
  merchantTransactionId: string | undefined;
  amount: string | undefined;
  currency: string | undefined;
  /** The outcome; a success's `savedAccount` is the account saved for the user (store it). */
  outcome: VerificationOutcome;
  /** Set when the shopper chose a saved account (no bank step): its stable id. */
  savedAccountId?: string;
}

/** Called once per session when its outcome is stored, whether or not the shopper is still on the page. */
export type OnOutcome = (report: OutcomeReport) => void | Promise<void>;

export interface DeliveryDeps {
  store: Pick<SessionStore, 'get' | 'mark' | 'readMark' | 'unmark'>;
  bus: Pick<ResultBus, 'publish'>;
  sealer: Sealer;
  events: Pick<MerchantEvents, 'sessionEnded'>;
  /** The merchant's hook, called once per session with the released outcome (token included). */
  onOutcome?: OnOutcome | undefined;
  logger: Logger;
  now: () => number;
}

function outcomeReport(record: SessionRecord, outcome: VerificationOutcome): OutcomeReport {
  const { sessionId, merchantUserId, merchantTransactionId, amount, currency } = record;
  return {
    sessionId,
    merchantUserId,
    merchantTransactionId,
    amount,
    currency,
    outcome: { ...outcome },
    ...(record.savedAccountId ? { savedAccountId: record.savedAccountId } : {}),
  };
}

/**
 * Completes the delivery of `record`'s stored outcome as far as it is released (verifications/bank-step.ts):
 * `held` when it is a success its page may not see yet (nothing is delivered), `shown` when only its page
 * has it (a saved account its shopper has yet to confirm), `delivered` otherwise; throws (a problem) when a
 * step failed and should be run again.
 */
export type CompleteDelivery = (
  record: SessionRecord,
  written?: DeliveryWritten,
) => Promise<'held' | 'shown' | 'delivered'>;

/**
 * What the caller already wrote with the outcome, in the same step (notifications.ts, storage/outcome-write.ts):
 * the link reference's marker, and the session's end event. Those steps are skipped, not repeated.
 */
export interface DeliveryWritten {
  linkRef?: boolean;
  event?: boolean;
}

export function createOutcomeDelivery(deps: DeliveryDeps): CompleteDelivery {
  const { store, bus, logger } = deps;

  /** The hook runs under a lease, so overlapping deliveries (retries, several instances) call it once. */
  async function callOnOutcomeOnce(
    onOutcome: OnOutcome,
    record: SessionRecord,
    outcome: VerificationOutcome,
    ttlMs: number,
  ): Promise<void> {
    const { sessionId } = record;
    if ((await store.readMark(markerKey.outcomeHandled(sessionId))) !== undefined) return;
    const lease = newId();
    if ((await store.mark(markerKey.outcomeRunning(sessionId), lease, OUTCOME_HOOK_LEASE_MS)) !== lease) {
      throw problem('outcome-in-progress', 'Another delivery of this outcome is being processed; retry later.');
    }
    try {
      await onOutcome(outcomeReport(record, outcome));
    } catch (error) {
      await store.unmark(markerKey.outcomeRunning(sessionId));
      logger.error(
        { err: safeError(error), session: sessionLogRef(sessionId) },
        "the onOutcome hook failed; the next delivery (the provider's retry, a payment, the return page) calls it again",
      );
      throw problem('outcome-hook-failed', "The merchant's outcome handler failed; retry later.");
    }
    await store.mark(markerKey.outcomeHandled(sessionId), 'done', ttlMs);
  }

  async function deliver(
    record: SessionRecord,
    written: DeliveryWritten = {},
  ): Promise<'held' | 'shown' | 'delivered'> {
    if (!record.outcome) return 'delivered';
    // As it is released: a success held for its bank step has no outcome yet; one completed in another
    // browser is the failure BANK_STEP_ELSEWHERE, so nothing below ever carries its account.
    const { shown, released } = await settleBankStep(store, record, deps.now());
    const outcome = shown.outcome;
    if (!outcome) return 'held';
    const ttlMs = sessionMarkerTtlMs(record, deps.now());
    if (outcome.status === 'success' && !written.linkRef)
      await store.mark(markerKey.linkRef(outcome.linkRef), record.sessionId, ttlMs);
    await bus.publish({
      type: 'result',
      sessionId: record.sessionId,
      outcome: browserOutcome(outcome, record.language),
    });
    if (!released.outcome) return 'shown';
    // Before the hook: a hook that keeps failing must not hold back the event (a retry runs this again,
    // and the event is recorded once).
    if (!written.event) await deps.events.sessionEnded(released);
    if (deps.onOutcome) await callOnOutcomeOnce(deps.onOutcome, released, openOutcome(deps.sealer, released)!, ttlMs);
    return 'delivered';
  }

  return deliver;
}
