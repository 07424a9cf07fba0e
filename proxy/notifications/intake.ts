// The checks a notification passes before its outcome is stored, in the order the route runs them:
// the signature, a JSON body, a session behind the URL's reference, a usable outcome, ids that match
// that session; then, with the outcome's writes, a webhook-id not delivered for another session. Each refusal is counted in the
// metrics by reason and logged: at most once a minute per reason while anyone could have sent it, every
// time once the provider's signature proves the provider sent it.
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config/schema.ts';
import type { ProxyMetrics } from '../common/metrics.ts';
import type { SessionStore } from '../storage/sessions.ts';
import { problem } from '../common/errors.ts';
import { clip, WarningLimiter } from '../common/log-limits.ts';
import { ID_PATTERN, sessionLogRef } from '../common/ids.ts';
import type { SessionRecord } from '../storage/sessions.ts';
import { readNotification, type ReportedNotification } from './outcome.ts';
import { createWebhookVerifier, type WebhookHeaders } from '../common/webhook-signature.ts';

export interface NotificationIntake {
  /** 401 unless the Standard Webhooks signature over `payload` is valid. */
  verifySignature(headers: WebhookHeaders, payload: string): void;
  /** 400 unless `payload` is JSON. */
  parseBody(payload: string): unknown;
  /** The session the notification URL's reference names; 404 when there is none. */
  sessionFor(ref: string, webhookId: string): Promise<SessionRecord>;
  /** The outcome the body reports (outcome.ts); its refusal is logged at error, for the merchant. */
  readOutcome(body: unknown, session: SessionRecord, webhookId: string): ReportedNotification;
  /** 409 when the body names another verification than the one this URL was issued for. */
  requireSameVerification(session: SessionRecord, reported: ReportedNotification, webhookId: string): void;
  /**
   * The 409 for a webhook-id already delivered for another session (the store found its marker holding
   * another: storage/outcome-write.ts), counted and logged.
   */
  webhookIdReused(webhookId: string, session: SessionRecord): Error;
}

/** Which id of the body contradicts what the session was started with, if any. */
function foreignField(session: SessionRecord, reported: ReportedNotification): string | undefined {
  if (
    reported.merchantTransactionId &&
    session.merchantTransactionId &&
    reported.merchantTransactionId !== session.merchantTransactionId
  ) {
    return 'merchant.merchantTransactionId';
  }
  if (reported.verificationId && session.verificationId && reported.verificationId !== session.verificationId)
    return 'verificationId';
  return undefined;
}

export interface IntakeDeps {
  config: Pick<ProxyConfig, 'webhookSecret' | 'successStatuses' | 'failureStatuses'>;
  store: Pick<SessionStore, 'getByNotificationRef'>;
  metrics: Pick<ProxyMetrics, 'refusedNotifications'>;
  logger: Logger;
}

export function createNotificationIntake(deps: IntakeDeps): NotificationIntake {
  const { store, logger } = deps;
  const webhook = createWebhookVerifier(deps.config.webhookSecret);
  const words = { success: deps.config.successStatuses, failure: deps.config.failureStatuses };
  // Anyone can post here: refusals are counted in metrics and logged at most once a minute per reason.
  const warnings = new WarningLimiter(logger);
  const refused = deps.metrics.refusedNotifications;

  return {
    verifySignature(headers, payload) {
      const webhookId = headers.id;
      try {
        webhook.verify(payload, headers);
      } catch (error) {
        const reason = error instanceof Error ? error.message : 'verification failed';
        refused.inc({ reason: 'signature' });
        warnings.warn(
          'signature',
          { webhookId: clip(webhookId), reason: clip(reason) },
          'rejected a notification: bad signature',
        );
        throw problem('unauthorized', `Webhook signature rejected: ${reason}.`);
      }
    },

    parseBody(payload) {
      try {
        return JSON.parse(payload) as unknown;
      } catch {
        refused.inc({ reason: 'bad_json' });
        throw problem('validation', 'The notification body is not valid JSON.', {
          errors: [{ path: 'body', message: 'must be valid JSON' }],
        });
      }
    },

    async sessionFor(ref, webhookId) {
      const session = ID_PATTERN.test(ref) ? await store.getByNotificationRef(ref) : undefined;
      if (!session) {
        refused.inc({ reason: 'unknown_ref' });
        warnings.warn(
          'unknown_ref',
          { webhookId: clip(webhookId), ref: clip(ref, 8) },
          'notification for an unknown session reference',
        );
        throw problem('not-found', 'No verification session has this notification reference.');
      }
      return session;
    },

    readOutcome(body, session, webhookId) {
      try {
        return readNotification(body, words);
      } catch (error) {
        // Signed by the provider and still unusable: the merchant must notice (a new status word, a bug).
        refused.inc({ reason: 'unusable_outcome' });
        logger.error(
          { session: sessionLogRef(session.sessionId), webhookId: clip(webhookId), reason: (error as Error).message },
          'notification refused: it reports no usable outcome',
        );
        throw error;
      }
    },

    // Signed is not enough: the body must be about the verification this URL was issued for.
    requireSameVerification(session, reported, webhookId) {
      const foreign = foreignField(session, reported);
      if (!foreign) return;
      refused.inc({ reason: 'session_mismatch' });
      logger.warn(
        { session: sessionLogRef(session.sessionId), webhookId: clip(webhookId), field: foreign },
        'notification refused: its body belongs to another verification',
      );
      throw problem(
        'notification-mismatch',
        `The notification's ${foreign} does not match the verification this URL belongs to.`,
        { errors: [{ path: foreign, message: 'does not match this session' }] },
      );
    },

    webhookIdReused(webhookId, session) {
      refused.inc({ reason: 'webhook_id_reused' });
      logger.warn(
        { session: sessionLogRef(session.sessionId), webhookId: clip(webhookId) },
        'notification refused: its webhook-id was delivered for another session',
      );
      return problem('conflict', 'This webhook-id was already delivered for another verification.');
    },
  };
}
