// POST /notifications/:ref — endpoint 3, the provider's signed outcome. Order matters: verify the
// signature, store the outcome (first terminal one wins), publish it, and only then answer 2xx, so an
// outcome acknowledged to the provider is never lost (a failure before the 2xx makes it retry).
import type { ServerResponse } from 'node:http';
import express, { type Router } from 'express';
import type { ProxyContext } from '../context.ts';
import { NotFoundProblem, UnauthorizedProblem, ValidationProblem } from '../errors.ts';
import { ID_PATTERN, sessionLogRef } from '../sessions/ids.ts';
import type { VerificationOutcome } from '../sessions/types.ts';
import { outcomeOfNotification } from './notification-outcome.ts';
import { rawBody } from './raw-body.ts';
import { createWebhookVerifier } from './webhook-signature.ts';

/** Seen webhook-ids are remembered this long (well past the provider's retry window). */
const WEBHOOK_ID_TTL_MS = 24 * 3_600_000;

const STORED_BODY = JSON.stringify({ status: 'stored' });
const IGNORED_BODY = JSON.stringify({ status: 'ignored' });

/**
 * The 200 answer, written directly: the provider only needs the status, and Express's res.json would
 * stringify the body again and hash it for an ETag, which means nothing on the answer to a POST.
 */
function acknowledge(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
}

function sameOutcome(a: VerificationOutcome | undefined, b: VerificationOutcome): boolean {
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

export function notificationsRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  const { store, bus, logger } = ctx;
  const webhook = createWebhookVerifier(ctx.config.webhookSecret);

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
      logger.warn({ webhookId: webhookId.slice(0, 64), reason }, 'rejected a notification: bad signature');
      throw new UnauthorizedProblem(`Webhook signature rejected: ${reason}.`);
    }

    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      throw new ValidationProblem('The notification body is not valid JSON.', [{ path: 'body', message: 'must be valid JSON' }]);
    }
    const ref = String(req.params.ref);
    const sessionId = ID_PATTERN.test(ref) ? await store.sessionIdForNotificationRef(ref) : undefined;
    const session = sessionId === undefined ? undefined : await store.get(sessionId);
    if (!session) {
      logger.warn({ webhookId, ref: ref.slice(0, 8) }, 'notification for an unknown session reference');
      throw new NotFoundProblem('No verification session has this notification reference.');
    }
    const outcome = outcomeOfNotification(body);

    const { stored, record } = await store.settle(session.sessionId, outcome);
    // The correlation fields go on each line rather than on a child logger: a child per request costs
    // a second pass through the redaction for its bindings.
    const logRef = sessionLogRef(session.sessionId);
    if (stored) {
      await bus.publish({ type: 'result', sessionId: session.sessionId, outcome });
      await store.rememberWebhookId(webhookId, WEBHOOK_ID_TTL_MS);
      logger.info({ session: logRef, webhookId, outcome: outcome.status }, 'verification outcome stored and published');
      acknowledge(res, STORED_BODY);
      return;
    }
    if (record.outcome) {
      // Already settled. Whoever stored the outcome may have failed to publish it (publisher connection
      // down, instance killed) and a later attempt may have recorded this webhook-id before failing too,
      // so nothing here proves the result was ever published: publish the STORED outcome again before
      // any 2xx. Cheap (one PUBLISH), and the relay sends at most one result per socket.
      await bus.publish({ type: 'result', sessionId: session.sessionId, outcome: record.outcome });
    }
    const firstDelivery = await store.rememberWebhookId(webhookId, WEBHOOK_ID_TTL_MS);
    if (firstDelivery && sameOutcome(record.outcome, outcome)) {
      // The same outcome under a webhook-id we never finished: an earlier attempt stored it but failed
      // before answering.
      logger.info({ session: logRef, webhookId }, 're-published a stored outcome after an interrupted delivery');
      acknowledge(res, STORED_BODY);
      return;
    }
    logger.info({ session: logRef, webhookId, state: record.state, duplicate: !firstDelivery },
      'notification ignored: the session already has its final state');
    acknowledge(res, IGNORED_BODY);
  });
  return router;
}
