// POST /notifications/:ref — endpoint 3, the provider's signed outcome: its exact bytes and Standard
// Webhooks headers to notifications/notifications.ts, which checks it, stores the outcome and delivers it
// before the 2xx (the order that keeps an acknowledged outcome from being lost is written there).
import express, { type Router } from 'express';
import { z } from 'zod';
import { rawBody } from '../http/raw-body.ts';
import { NOTIFICATION_BODY_LIMIT_BYTES } from '../config/limits.ts';
import type { Operation } from '../openapi/operation.ts';
import type { Notifications } from '../notifications/notifications.ts';
import { NotificationBody } from '../notifications/outcome.ts';

const webhookHeader = (description: string) => ({ description, schema: z.string().min(1), required: true });

export const notificationsOperations: Operation[] = [
  {
    method: 'post',
    path: '/notifications/:ref',
    operationId: 'receiveNotification',
    summary: "The provider's signed outcome of one verification",
    description:
      'Standard Webhooks signature over the exact body. Answered 2xx only once the outcome is stored and delivered ' +
      '(OBV_BIND_BANK_STEP: a success is stored and acknowledged, and delivered when its bank step is confirmed); ' +
      'on its own listener when OBV_NOTIFICATION_PUBLIC_URL is set.',
    caller: 'provider',
    pathParams: { ref: z.string().meta({ description: "The session's notification reference (never its id)" }) },
    headers: {
      'webhook-id': webhookHeader('Unique per notification; a redelivery repeats it'),
      'webhook-timestamp': webhookHeader('Unix seconds; five minutes of tolerance'),
      'webhook-signature': webhookHeader('`v1,<base64 HMAC-SHA256 of {id}.{timestamp}.{body}>`, space-separated'),
    },
    body: { contentType: 'application/json', schema: NotificationBody },
    responses: {
      200: {
        description:
          'Stored (or the session already had this outcome), or ignored because the session had settled otherwise',
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
      500: "The merchant's onOutcome hook failed (retry later), or something else failed.",
    },
  },
];

export function notificationsRouter(deps: { notifications: Notifications }): Router {
  const router = express.Router();
  // Raw body: the signature covers the exact bytes.
  router.post('/notifications/:ref', rawBody(NOTIFICATION_BODY_LIMIT_BYTES), async (req, res) => {
    const status = await deps.notifications.receive({
      ref: String(req.params.ref),
      headers: {
        id: req.get('webhook-id') ?? '',
        timestamp: req.get('webhook-timestamp') ?? '',
        signature: req.get('webhook-signature') ?? '',
      },
      payload: Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '',
    });
    res.json({ status });
  });
  return router;
}
