// Everything after an outcome is stored: the link reference's index, the result to the element's
// sockets, the session's merchant event and the merchant's onOutcome hook. Each step is idempotent, so a
// provider retry after a failure here runs it again safely: the relay sends at most one result per
// socket, the link index is a marker, the event's id is the session's (recorded once), and the hook is
// marked done only after it returned. A success whose bank step is bound (sessions/bank-step.ts) is
// delivered once it is released, by whoever sees it first after the decision: the return page that
// takes it, or a later notification of the same outcome; until then nothing of it leaves the store.
import type { ProxyContext } from '../context.ts';
import { problem } from '../common/errors.ts';
import type { OnOutcome, OutcomeReport } from '../hooks.ts';
import { safeError } from '../common/logger.ts';
import { newId, sessionLogRef } from '../common/ids.ts';
import { markerKey, sessionMarkerTtlMs } from '../storage/markers.ts';
import { browserOutcome } from '../storage/result-bus.ts';
import { type SessionRecord, type VerificationOutcome } from '../storage/sessions.ts';
import { openOutcome } from '../sealing/sealed-outcome.ts';
import type { ReportedNotification } from '../notifications/outcome.ts';
import { OUTCOME_HOOK_LEASE_MS } from '../config/limits.ts';
import { releasedRecord } from './bank-step.ts';

/** The same outcome as the provider reports it (the link reference, saved account and reconnect are ours, so they are left out). */
export function sameOutcome(stored: VerificationOutcome | undefined, reported: ReportedNotification['outcome']): boolean {
  if (!stored || stored.status !== reported.status) return false;
  const { linkRef: _ours, savedAccount: _saved, reconnect: _reconnect, ...provider } = stored as VerificationOutcome & { linkRef?: string; savedAccount?: unknown; reconnect?: unknown };
  // Field by field: the stored outcome was rebuilt after sealing, so its keys need not be in the same order.
  const [ours, theirs] = [provider, reported] as unknown as Record<string, unknown>[];
  const fields = Object.keys(ours!);
  return fields.length === Object.keys(theirs!).length && fields.every((field) => ours![field] === theirs![field]);
}

function outcomeReport(record: SessionRecord, outcome: VerificationOutcome): OutcomeReport {
  const { sessionId, merchantUserId, merchantTransactionId, amount, currency } = record;
  return { sessionId, merchantUserId, merchantTransactionId, amount, currency, outcome: { ...outcome }, ...(record.savedAccountId ? { savedAccountId: record.savedAccountId } : {}) };
}

/**
 * Completes the delivery of `record`'s stored outcome as it is released (sessions/bank-step.ts): `held`
 * when it is a success still waiting for its bank step (nothing is delivered: the return page releases
 * it later, from the store), `delivered` otherwise; throws (a problem) when a step failed and should be
 * run again.
 */
export type CompleteDelivery = (record: SessionRecord) => Promise<'held' | 'delivered'>;

export function createOutcomeDelivery(ctx: ProxyContext): CompleteDelivery {
  const { store, bus, logger } = ctx;

  /** The hook runs under a lease, so overlapping deliveries (retries, several instances) call it once. */
  async function callOnOutcomeOnce(onOutcome: OnOutcome, record: SessionRecord, outcome: VerificationOutcome, ttlMs: number): Promise<void> {
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
      logger.error({ err: safeError(error), session: sessionLogRef(sessionId) }, 'the onOutcome hook failed; the next delivery (the provider\'s retry, or the return page\'s reload) calls it again');
      throw problem('outcome-hook-failed', 'The merchant\'s outcome handler failed; retry later.');
    }
    await store.mark(markerKey.outcomeHandled(sessionId), 'done', ttlMs);
  }

  return async (record) => {
    if (!record.outcome) return 'delivered';
    // As it is released: a success held for its bank step has no outcome yet; one completed in another
    // browser is the failure BANK_STEP_ELSEWHERE, so nothing below ever carries its account.
    const released = await releasedRecord(store, record, ctx.now());
    const outcome = released.outcome;
    if (!outcome) return 'held';
    const ttlMs = sessionMarkerTtlMs(record, ctx.now());
    if (outcome.status === 'success') await store.mark(markerKey.linkRef(outcome.linkRef), record.sessionId, ttlMs);
    await bus.publish({ type: 'result', sessionId: record.sessionId, outcome: browserOutcome(outcome, record.language) });
    // Before the hook: a hook that keeps failing must not hold back the event (a retry runs this again,
    // and the event is recorded once).
    await ctx.events.sessionEnded(released);
    if (ctx.onOutcome) await callOnOutcomeOnce(ctx.onOutcome, released, openOutcome(ctx.sealer, released)!, ttlMs);
    return 'delivered';
  };
}
