// POST /notifications/:ref — endpoint 3, the provider's signed outcome. Order matters: verify the
// signature, check the body belongs to the session the reference names, store the outcome (first
// terminal one wins), finish the delivery (link reference, publish, the merchant's onOutcome hook), and
// only then answer 2xx, so an outcome acknowledged to the provider is never lost: any failure before
// the 2xx makes the provider retry, and a retry of the same outcome finishes whatever was left undone.
import type { ServerResponse } from 'node:http';
import express, { type Router } from 'express';
import type { ProxyContext } from '../context.ts';
import { problem } from '../errors.ts';
import { safeError } from '../logger.ts';
import { markerKey, sessionMarkerTtlMs } from '../sessions/markers.ts';
import { ID_PATTERN, newId, sessionLogRef } from '../sessions/ids.ts';
import { browserOutcome, type SessionRecord, type VerificationOutcome } from '../sessions/types.ts';
import { readNotification, type ReportedNotification } from '../notifications/outcome.ts';
import { rawBody } from '../http/raw-body.ts';
import { clip, WarningLimiter } from '../log-limits.ts';
import { createWebhookVerifier } from '../notifications/signature.ts';

/** Seen webhook-ids are remembered this long (well past the provider's retry window). */
const WEBHOOK_ID_TTL_MS = 24 * 3_600_000;

/**
 * How long one delivery holds the right to call `onOutcome`: a concurrent or retried delivery meanwhile
 * gets a 503 (the provider retries) instead of a second call; an instance that died mid-call frees it then.
 */
const OUTCOME_HOOK_LEASE_MS = 120_000;

const STORED_BODY = JSON.stringify({ status: 'stored' });
const IGNORED_BODY = JSON.stringify({ status: 'ignored' });

/**
 * The 200 answer, written directly: the provider only needs the status, and Express's res.json would
 * stringify the body again and hash it for an ETag, which means nothing on the answer to a POST.
 */
function acknowledge(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
}

/** The same outcome as the provider reports it (the link reference is ours, so it is left out). */
function sameOutcome(stored: VerificationOutcome | undefined, reported: ReportedNotification['outcome']): boolean {
  if (!stored || stored.status !== reported.status) return false;
  const { linkRef: _ours, ...provider } = stored as VerificationOutcome & { linkRef?: string };
  return JSON.stringify(provider) === JSON.stringify(reported);
}

/** Which id of the body contradicts what the session was started with, if any. */
function foreignField(session: SessionRecord, reported: ReportedNotification): string | undefined {
  if (reported.merchantTransactionId && session.merchantTransactionId && reported.merchantTransactionId !== session.merchantTransactionId) {
    return 'merchant.merchantTransactionId';
  }
  if (reported.verificationId && session.verificationId && reported.verificationId !== session.verificationId) return 'verificationId';
  return undefined;
}

export function notificationsRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  const { store, bus, logger } = ctx;
  const webhook = createWebhookVerifier(ctx.config.webhookSecret);
  const words = { success: ctx.config.successStatuses, failure: ctx.config.failureStatuses };

  /**
   * Everything after the outcome is stored. Each step is idempotent, so a provider retry after a
   * failure here runs it again safely: the relay sends at most one result per socket, the link index is
   * a marker, and the hook is marked done only after it returned.
   */
  async function completeDelivery(record: SessionRecord): Promise<void> {
    const outcome = record.outcome;
    if (!outcome) return;
    const ttlMs = sessionMarkerTtlMs(record, ctx.now());
    if (outcome.status === 'success') await store.mark(markerKey.linkRef(outcome.linkRef), record.sessionId, ttlMs);
    await bus.publish({ type: 'result', sessionId: record.sessionId, outcome: browserOutcome(outcome, record.language) });
    if (ctx.onOutcome) await callOnOutcomeOnce(ctx.onOutcome, record, outcome, ttlMs);
  }

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
      logger.error({ err: safeError(error), session: sessionLogRef(sessionId) }, 'the onOutcome hook failed; the provider will retry the notification');
      throw problem('outcome-hook-failed', 'The merchant\'s outcome handler failed; retry later.');
    }
    await store.mark(markerKey.outcomeHandled(sessionId), 'done', ttlMs);
  }

  // Anyone can post here: refusals are counted in metrics and logged at most once a minute per reason.
  const warnings = new WarningLimiter(logger);
  const refused = ctx.metrics.refusedNotifications;

  // Raw body: the signature covers the exact bytes. Any content type is read the same way.
  router.post('/notifications/:ref', rawBody(64 * 1024), async (req, res) => {
    const payload = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    const webhookId = req.get('webhook-id') ?? '';
    try {
      webhook.verify(payload, {
        id: webhookId,
        timestamp: req.get('webhook-timestamp') ?? '',
        signature: req.get('webhook-signature') ?? '',
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'verification failed';
      refused.inc({ reason: 'signature' });
      warnings.warn('signature', { webhookId: clip(webhookId), reason: clip(reason) }, 'rejected a notification: bad signature');
      throw problem('unauthorized', `Webhook signature rejected: ${reason}.`);
    }

    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      refused.inc({ reason: 'bad_json' });
      throw problem('validation', 'The notification body is not valid JSON.', { errors: [{ path: 'body', message: 'must be valid JSON' }] });
    }
    const ref = String(req.params.ref);
    const sessionId = ID_PATTERN.test(ref) ? await store.sessionIdForNotificationRef(ref) : undefined;
    const session = sessionId === undefined ? undefined : await store.get(sessionId);
    if (!session) {
      refused.inc({ reason: 'unknown_ref' });
      warnings.warn('unknown_ref', { webhookId: clip(webhookId), ref: clip(ref, 8) }, 'notification for an unknown session reference');
      throw problem('not-found', 'No verification session has this notification reference.');
    }
    const logRef = sessionLogRef(session.sessionId);
    let reported: ReportedNotification;
    try {
      reported = readNotification(body, words);
    } catch (error) {
      // Signed by the provider and still unusable: the merchant must notice (a new status word, a bug).
      refused.inc({ reason: 'unusable_outcome' });
      logger.error({ session: logRef, webhookId: clip(webhookId), reason: (error as Error).message }, 'notification refused: it reports no usable outcome');
      throw error;
    }
    // Signed is not enough: the body must be about the verification this URL was issued for.
    const foreign = foreignField(session, reported);
    if (foreign) {
      refused.inc({ reason: 'session_mismatch' });
      logger.warn({ session: logRef, webhookId: clip(webhookId), field: foreign }, 'notification refused: its body belongs to another verification');
      throw problem('notification-mismatch',
        `The notification's ${foreign} does not match the verification this URL belongs to.`, { errors: [{ path: foreign, message: 'does not match this session' }] });
    }
    const boundTo = await store.mark(markerKey.webhook(webhookId), session.sessionId, WEBHOOK_ID_TTL_MS);
    if (boundTo !== session.sessionId) {
      refused.inc({ reason: 'webhook_id_reused' });
      logger.warn({ session: logRef, webhookId: clip(webhookId) }, 'notification refused: its webhook-id was delivered for another session');
      throw problem('conflict', 'This webhook-id was already delivered for another verification.');
    }

    const outcome: VerificationOutcome = reported.outcome.status === 'success' ? { ...reported.outcome, linkRef: newId() } : reported.outcome;
    const { stored, record } = await store.settle(session.sessionId, outcome);
    if (!stored && !sameOutcome(record.outcome, reported.outcome)) {
      // Whoever stored the first outcome may have failed to publish it (publisher connection down, instance
      // killed): nothing here proves it reached the sockets, so finish its delivery before any 2xx.
      await completeDelivery(record);
      logger.info({ session: logRef, webhookId, state: record.state }, 'notification ignored: the session already has its final state');
      acknowledge(res, IGNORED_BODY);
      return;
    }
    if (stored) ctx.metrics.outcomes.inc({ status: outcome.status });
    // Stored now, or the same outcome again: an earlier delivery may have stopped before it finished.
    await completeDelivery(record);
    logger.info({ session: logRef, webhookId, outcome: outcome.status, redelivery: !stored }, 'verification outcome stored and published');
    acknowledge(res, STORED_BODY);
  });
  return router;
}

/** What the merchant's `onOutcome` hook receives: the whole outcome, token included (server side only). */
export interface OutcomeReport {
  sessionId: string;
  merchantUserId: string | undefined;
  merchantTransactionId: string | undefined;
  amount: string | undefined;
  currency: string | undefined;
  outcome: VerificationOutcome;
}

/** Called once per session when its outcome is stored, whether or not the shopper is still on the page. */
export type OnOutcome = (report: OutcomeReport) => void | Promise<void>;

function outcomeReport(record: SessionRecord, outcome: VerificationOutcome): OutcomeReport {
  const { sessionId, merchantUserId, merchantTransactionId, amount, currency } = record;
  return { sessionId, merchantUserId, merchantTransactionId, amount, currency, outcome: { ...outcome } };
}
