// Endpoint 2: POST /exp/ext/mint/ooes/v1/obv — validates the verification request, records it and
// answers with the consumerUrl of the sandbox bank's sign-in page.
import type { Request } from 'express';
import { Router } from 'express';
import { requireBearer } from './bearer.ts';
import type { ProviderContext } from './context.ts';
import { applyEndpointFaults } from './endpoint-faults.ts';
import { methodNotAllowed } from './error-handlers.ts';
import { requireJsonBody } from './json-body.ts';
import { HttpProblem, parseOrThrow } from './problem.ts';
import { randomId } from './state.ts';
import { VerificationRequest } from './verification-schema.ts';

export const VERIFICATION_PATH = '/exp/ext/mint/ooes/v1/obv';

/**
 * Base URL the consumer's browser reaches the sandbox at: the `publicUrl` option, else this request's
 * Host plus the path the app is mounted at (`req.baseUrl`, empty at the root).
 */
function publicBase(context: ProviderContext, req: Request): string {
  if (context.config.publicUrl) return context.config.publicUrl;
  try {
    return new URL(`${req.protocol}://${req.get('host') ?? ''}`).origin + req.baseUrl;
  } catch {
    throw new HttpProblem(400, 'The Host header is not a valid host.', {
      errors: [{ path: 'host', message: 'must be a valid host' }],
    });
  }
}

function unprocessable(path: string, detail: string): HttpProblem {
  return new HttpProblem(422, detail, { errors: [{ path, message: detail }] });
}

export function verificationRouter(context: ProviderContext): Router {
  const router = Router();
  router.post(VERIFICATION_PATH, requireBearer(context), requireJsonBody, async (req, res) => {
    context.stats.verificationRequests += 1;
    if (await applyEndpointFaults(context, 'verification', res)) return;
    const clientId = res.locals.clientId as string;
    const request = parseOrThrow(VerificationRequest, req.body);

    if (request.countryCode !== 'US') throw unprocessable('countryCode', 'Only countryCode US is accepted.');
    if (request.accountToken !== undefined) {
      const linked = context.state.accounts.get(request.accountToken);
      if (!linked || linked.clientId !== clientId) {
        throw unprocessable('accountToken', 'The accountToken was not issued by this service to this client.');
      }
    }
    const notificationURL = request.merchant.notificationURL ?? context.config.defaultNotificationURL;
    if (!notificationURL) {
      throw unprocessable(
        'merchant.notificationURL',
        'A notificationURL is required: none is configured for this client.',
      );
    }

    const base = publicBase(context, req);
    const now = context.config.now();
    const verificationId = randomId('vrf_');
    const consumerToken = randomId('', 24);
    context.state.verifications.set(verificationId, {
      verificationId,
      consumerToken,
      clientId,
      request,
      returnURL: request.merchant.returnURL ?? context.config.defaultReturnURL,
      notificationURL,
      createdAt: now,
      expiresAt: now + context.config.consumerUrlTtlSeconds * 1000,
      result: undefined,
    });
    context.config.logger.info({ verificationId, clientId }, 'verification started');

    const consumerUrl = `${base}/consumer/${verificationId}?t=${consumerToken}`;
    res.status(200).set('Cache-Control', 'no-store').json({ consumerUrl, verificationId });
  });
  router.all(VERIFICATION_PATH, methodNotAllowed('POST'));
  return router;
}
