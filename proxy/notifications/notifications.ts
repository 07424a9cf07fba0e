// A provider notification (endpoint 3), as one service. Order matters: check the notification (intake.ts),
// store the outcome (first terminal one wins), finish the delivery (verifications/delivery.ts: link
// reference, publish, the merchant's onOutcome hook), and only then answer 2xx, so an outcome acknowledged
// to the provider is never lost: any failure before the 2xx makes the provider retry, and a retry of the
// same outcome finishes whatever was left undone. A success whose bank step is bound
// (verifications/bank-step.ts) is stored and acknowledged like any other: holding it is the proxy's own
// state (the store and its markers). It is delivered at once, to the page and the merchant alike, when
// its starting browser is already back from the bank with the return URL's proof; otherwise when the
// bank step is confirmed.
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config/schema.ts';
import { newId, sessionLogRef } from '../common/ids.ts';
import type { ProxyMetrics } from '../common/metrics.ts';
import type { WebhookHeaders } from '../common/webhook-signature.ts';
import type { SavedAccounts } from '../accounts/accounts.ts';
import type { Sealer } from '../sealing/sealer.ts';
import { openOutcome, sealOutcome } from '../sealing/sealed-outcome.ts';
import { markerKey, sessionMarkerTtlMs } from '../storage/markers.ts';
import type { SessionRecord, SessionStore, VerificationOutcome } from '../storage/sessions.ts';
import type { OutcomeWriter } from '../storage/outcome-write.ts';
import { stateForOutcome } from '../storage/session-codec.ts';
import type { MerchantEvents } from '../events/events.ts';
import { WEBHOOK_ID_TTL_MS } from '../config/limits.ts';
import { scrubProviderText } from '../upstream/provider-text.ts';
import { outcomeArrivedAt, releasedOnceStored } from '../verifications/bank-step.ts';
import type { Verifications } from '../verifications/verifications.ts';
import { createNotificationIntake } from './intake.ts';
import type { ReportedNotification } from './outcome.ts';

export interface NotificationsDeps {
  config: Pick<ProxyConfig, 'webhookSecret' | 'successStatuses' | 'failureStatuses'>;
  store: SessionStore;
  /** The notification's writes as one step (storage/outcome-write.ts). */
  outcomes: OutcomeWriter;
  /** The session's end event, recorded with the outcome. */
  events: Pick<MerchantEvents, 'sessionEndEvent' | 'recorded'>;
  sealer: Sealer;
  accounts: Pick<SavedAccounts, 'savedAccountFor'>;
  verifications: Pick<Verifications, 'deliver'>;
  metrics: Pick<ProxyMetrics, 'refusedNotifications' | 'outcomes'>;
  logger: Logger;
  now: () => number;
}

/** One notification as it arrived: the reference in its URL, its Standard Webhooks headers, its exact body. */
export interface ReceivedNotification {
  ref: string;
  headers: WebhookHeaders;
  payload: string;
}

export interface Notifications {
  /** `stored` (or the same outcome again), or `ignored` (the session had ended otherwise); a problem for each refusal. */
  receive(notification: ReceivedNotification): Promise<'stored' | 'ignored'>;
}

/** The same outcome as the provider reports it (the link reference, saved account and reconnect are ours, so they are left out). */
export function sameOutcome(
  stored: VerificationOutcome | undefined,
  reported: ReportedNotification['outcome'],
): boolean {
  if (!stored || stored.status !== reported.status) return false;
  const {
    linkRef: _ours,
    savedAccount: _saved,
    reconnect: _reconnect,
    ...provider
  } = stored as VerificationOutcome & { linkRef?: string; savedAccount?: unknown; reconnect?: unknown };
  // Field by field: the stored outcome was rebuilt after sealing, so its keys need not be in the same order.
  const [ours, theirs] = [provider, reported] as unknown as Record<string, unknown>[];
  const fields = Object.keys(ours!);
  return fields.length === Object.keys(theirs!).length && fields.every((field) => ours![field] === theirs![field]);
}

export function createNotifications(deps: NotificationsDeps): Notifications {
  const { store, logger, sealer } = deps;
  const intake = createNotificationIntake(deps);
  const completeDelivery = deps.verifications.deliver;

  return {
    async receive({ ref, headers, payload }) {
      const webhookId = headers.id;
      intake.verifySignature(headers, payload);
      const body = intake.parseBody(payload);
      const session = await intake.sessionFor(ref, webhookId);
      const reported = intake.readOutcome(body, session, webhookId);
      intake.requireSameVerification(session, reported, webhookId);

      const { sessionId } = session;
      const logRef = sessionLogRef(sessionId);
      const saved =
        reported.outcome.status === 'success' ? deps.accounts.savedAccountFor(session, reported.outcome) : {};
      const outcome: VerificationOutcome =
        reported.outcome.status === 'success' ? { ...reported.outcome, linkRef: newId(), ...saved } : reported.outcome;
      // The token is sealed before any backend sees it.
      const sealed = sealOutcome(sealer, sessionId, outcome);
      const now = deps.now();
      const ttlMs = sessionMarkerTtlMs(session, now);
      // The merchant's event goes with the outcome when the outcome is released as it is stored; a held one
      // is told once its bank step is confirmed (delivery.ts).
      const settled: SessionRecord = { ...session, state: stateForOutcome(sealed), outcome: sealed };
      const event = releasedOnceStored(settled) ? deps.events.sessionEndEvent(settled) : undefined;
      // Every write of this notification in one step (storage/outcome-write.ts; on SQLite one transaction
      // and one fsync wait, where each was its own commit and the settle and the event each waited for one):
      // the webhook-id's marker; the link reference's, which answers before any page can read the outcome
      // that names it (a page that sees its success may pay with it at once; a reference whose outcome loses
      // the settle is refused anyway: payments/linked-account.ts resolveLinkRef); the settle; and, when this
      // stores the outcome, a bound session's arrival time (its return grace counts from there: the moment of
      // this write, which the fsync wait after it no longer shifts later) and the event.
      const written = await deps.outcomes.recordOutcome({
        sessionId,
        outcome: sealed,
        webhook: { key: markerKey.webhook(webhookId), value: sessionId, ttlMs: WEBHOOK_ID_TTL_MS },
        markers:
          outcome.status === 'success' ? [{ key: markerKey.linkRef(outcome.linkRef), value: sessionId, ttlMs }] : [],
        ifStored: {
          markers: session.browserBinding
            ? [{ key: markerKey.bankStepOutcomeAt(sessionId), value: String(now), ttlMs }]
            : [],
          event,
        },
        nowMs: now,
      });
      if (written.conflict) throw intake.webhookIdReused(webhookId, session);
      const { stored, record } = written;
      if (!stored && !sameOutcome(openOutcome(sealer, record), reported.outcome)) {
        // Whoever stored the first outcome may have failed to publish it (publisher connection down, instance
        // killed): nothing here proves it reached the sockets, so finish its delivery before any 2xx (a success
        // held for its bank step stays held: its return releases it).
        await completeDelivery(record);
        logger.info(
          { session: logRef, webhookId, state: record.state },
          'notification ignored: the session already has its final state',
        );
        return 'ignored';
      }
      if (stored) {
        deps.metrics.outcomes.inc({ status: outcome.status });
        if (event) deps.events.recorded(event);
      }
      // The same outcome again: its grace counts from the first time it is known stored (a first notification
      // that stopped before its arrival time was written, on a backend that writes one call at a time).
      else if (record.browserBinding) await outcomeArrivedAt(store, record, now);
      // Stored now, or the same outcome again: an earlier delivery may have stopped before it finished. What
      // this call's write already holds is not written again.
      const delivered = await completeDelivery(record, stored ? { linkRef: true, event: event !== undefined } : {});
      if (delivered !== 'delivered') {
        logger.info(
          { session: logRef, webhookId, redelivery: !stored, shown: delivered === 'shown' },
          delivered === 'shown'
            ? 'success stored, acknowledged and shown to its page; the merchant hears of it once the shopper confirms the saved account'
            : 'success stored and acknowledged, held until its starting browser is back from the bank',
        );
        return 'stored';
      }
      // The provider's failure text is for the operator only (the browser gets the proxy's words), scrubbed.
      const failure =
        outcome.status === 'failure'
          ? { code: scrubProviderText(outcome.code), message: scrubProviderText(outcome.message) }
          : undefined;
      logger.info(
        { session: logRef, webhookId, outcome: outcome.status, redelivery: !stored, ...(failure ? { failure } : {}) },
        'verification outcome stored and published',
      );
      return 'stored';
    },
  };
}
