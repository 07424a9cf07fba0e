// POST /notifications/:ref — endpoint 3, the provider's signed outcome. Order matters: check the
// notification (notifications/intake.ts), store the outcome (first terminal one wins), finish the
// delivery (notifications/delivery.ts: link reference, publish, the merchant's onOutcome hook), and
// only then answer 2xx, so an outcome acknowledged to the provider is never lost: any failure before
// the 2xx makes the provider retry, and a retry of the same outcome finishes whatever was left undone.
// A success whose bank step is bound (sessions/bank-step.ts) is stored and acknowledged like any other:
// holding it is the proxy's own state (the store and its markers), released by the return page.
import express, { type Router } from 'express';
import { z } from 'zod';
import type { ProxyContext } from '../context.ts';
import { newId, sessionLogRef } from '../common/ids.ts';
import type { VerificationOutcome } from '../storage/sessions.ts';
import { openOutcome, sealOutcome } from '../sealing/sealed-outcome.ts';
import { rawBody } from '../http/raw-body.ts';
import { createNotificationIntake } from '../notifications/intake.ts';
import { createOutcomeDelivery, sameOutcome } from '../verifications/delivery.ts';
import { NOTIFICATION_BODY_LIMIT_BYTES } from '../config/limits.ts';
import { savedAccountFor } from '../accounts/saving.ts';
import { scrubProviderText } from '../upstream/provider-text.ts';
import type { Operation } from '../openapi/operation.ts';
import { NotificationBody } from '../notifications/outcome.ts';
import { outcomeArrivedAt } from '../verifications/bank-step.ts';

const webhookHeader = (description: string) => ({ description, schema: z.string().min(1), required: true });

export const notificationsOperations: Operation[] = [{
  method: 'post',
  path: '/notifications/:ref',
  operationId: 'receiveNotification',
  summary: 'The provider\'s signed outcome of one verification',
  description: 'Standard Webhooks signature over the exact body. Answered 2xx only once the outcome is stored and delivered '
    + '(OBV_BIND_BANK_STEP: a success is stored and acknowledged, and delivered when its bank step is confirmed); '
    + 'on its own listener when OBV_NOTIFICATION_PUBLIC_URL is set.',
  caller: 'provider',
  pathParams: { ref: z.string().meta({ description: 'The session\'s notification reference (never its id)' }) },
  headers: {
    'webhook-id': webhookHeader('Unique per notification; a redelivery repeats it'),
    'webhook-timestamp': webhookHeader('Unix seconds; five minutes of tolerance'),
    'webhook-signature': webhookHeader('`v1,<base64 HMAC-SHA256 of {id}.{timestamp}.{body}>`, space-separated'),
  },
  body: { contentType: 'application/json', schema: NotificationBody },
  responses: {
    200: {
      description: 'Stored (or the session already had this outcome), or ignored because the session had settled otherwise',
      content: { 'application/json': z.object({ status: z.enum(['stored', 'ignored']) }) },
    },
  },
  problems: {
    400: 'The body is not a JSON object.',
    401: 'The signature is missing or wrong.',
    404: 'No session has this notification reference.',
    409: 'The body names another verification, or the webhook-id was delivered for another session.',
    413: 'The body is larger than 64 KiB.',
    422: 'An unknown verificationStatus, or a success without an accountToken.',
    503: 'The session store cannot be reached, or another delivery of this outcome is being processed: retry.',
    500: 'The merchant\'s onOutcome hook failed (retry later), or something else failed.',
  },
}];

export function notificationsRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  const { store, logger } = ctx;
  const intake = createNotificationIntake(ctx);
  const completeDelivery = createOutcomeDelivery(ctx);

  // Raw body: the signature covers the exact bytes.
  router.post('/notifications/:ref', rawBody(NOTIFICATION_BODY_LIMIT_BYTES), async (req, res) => {
    const payload = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    const webhookId = req.get('webhook-id') ?? '';
    intake.verifySignature(req, payload);
    const body = intake.parseBody(payload);
    const session = await intake.sessionFor(String(req.params.ref), webhookId);
    const reported = intake.readOutcome(body, session, webhookId);
    intake.requireSameVerification(session, reported, webhookId);
    await intake.bindWebhookId(webhookId, session);

    const logRef = sessionLogRef(session.sessionId);
    const saved = reported.outcome.status === 'success' ? savedAccountFor(ctx, session, reported.outcome) : {};
    const outcome: VerificationOutcome = reported.outcome.status === 'success'
      ? { ...reported.outcome, linkRef: newId(), ...saved }
      : reported.outcome;
    // The token is sealed before any backend sees it.
    const { stored, record } = await store.settle(session.sessionId, sealOutcome(ctx.sealer, session.sessionId, outcome));
    if (!stored && !sameOutcome(openOutcome(ctx.sealer, record), reported.outcome)) {
      // Whoever stored the first outcome may have failed to publish it (publisher connection down, instance
      // killed): nothing here proves it reached the sockets, so finish its delivery before any 2xx (a success
      // held for its bank step stays held: the return page releases it).
      await completeDelivery(record);
      logger.info({ session: logRef, webhookId, state: record.state }, 'notification ignored: the session already has its final state');
      res.json({ status: 'ignored' });
      return;
    }
    if (stored) ctx.metrics.outcomes.inc({ status: outcome.status });
    // The bank step's return grace counts from the first time the outcome is known stored.
    if (record.browserBinding) await outcomeArrivedAt(store, record, ctx.now());
    // Stored now, or the same outcome again: an earlier delivery may have stopped before it finished.
    if ((await completeDelivery(record)) === 'held') {
      logger.info({ session: logRef, webhookId, redelivery: !stored }, 'success stored and acknowledged, held until its bank step is confirmed on the return page');
      res.json({ status: 'stored' });
      return;
    }
    // The provider's failure text is for the operator only (the browser gets the proxy's words), scrubbed.
    const failure = outcome.status === 'failure' ? { code: scrubProviderText(outcome.code), message: scrubProviderText(outcome.message) } : undefined;
    logger.info({ session: logRef, webhookId, outcome: outcome.status, redelivery: !stored, ...(failure ? { failure } : {}) },
      'verification outcome stored and published');
    res.json({ status: 'stored' });
  });
  return router;
}
