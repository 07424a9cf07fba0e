// Endpoint 4: POST /transaction/v4/interactive — the follow-on call that spends an accountToken. The
// sandbox checks the fields the verification flow relies on (docs/UPSTREAM.md#endpoint-4-interactive-transaction)
// and approves every transaction on an account it linked for the same client.
import type { Request } from 'express';
import { Router } from 'express';
import { z } from 'zod';
import { requireBearer } from './bearer.ts';
import type { ProviderContext } from './context.ts';
import { applyEndpointFaults } from './endpoint-faults.ts';
import { methodNotAllowed } from './error-handlers.ts';
import { requireJsonBody } from './json-body.ts';
import type { ProblemField } from './problem.ts';
import { HttpProblem, parseOrThrow, validationProblem } from './problem.ts';
import { randomId } from './state.ts';

export const TRANSACTION_PATH = '/transaction/v4/interactive';

/** Endpoint 4's errorCode for a stale account: a verification carrying its accountToken re-authorizes it. */
export const REAUTHORIZATION_REQUIRED = 'REAUTHORIZATION_REQUIRED';

const optionalText = z.string().max(1000).optional();

/** The fields the provider lists; any other field (it does not show the rest) is allowed through. */
export const InteractiveTransactionRequest = z.looseObject({
  accountToken: z.string({ error: 'accountToken is required' }).min(1, 'accountToken must not be empty').max(200),
  product: optionalText,
  countryCode: z.string().length(2, 'must be a 2-character country code').optional(),
  transactionRegion: optionalText,
  language: optionalText,
  dataPassThrough: optionalText,
  originatorIp: z.union([z.ipv4(), z.ipv6()], { error: 'must be an IPv4 or IPv6 address' }).optional(),
  merchant: z.object(
    {
      merchantId: z.string({ error: 'merchantId is required' }).min(1).max(100),
      merchantUserId: z.string().max(100).optional(),
      merchantTransactionId: z.string({ error: 'merchantTransactionId is required' }).min(1).max(100),
      merchantSubId: z.string().max(100).optional(),
    },
    { error: 'merchant is required and must be an object' },
  ),
});

const REQUIRED_HEADERS = ['x-pgw-app-id', 'x-pgw-client-id'] as const;

/** The gateway headers must be present and non-empty (docs/UPSTREAM.md#d17-transaction-scope-and-gateway-headers). */
function checkGatewayHeaders(req: Request): void {
  const errors: ProblemField[] = REQUIRED_HEADERS.filter((name) => !req.get(name)?.trim()).map((name) => ({
    path: name,
    message: `header ${name} is required`,
  }));
  if (errors.length > 0) throw validationProblem(errors);
}

export function transactionRouter(context: ProviderContext): Router {
  const router = Router();
  router.post(TRANSACTION_PATH, requireBearer(context), requireJsonBody, async (req, res) => {
    if (await applyEndpointFaults(context, 'transaction', res)) return;
    checkGatewayHeaders(req);
    const clientId = res.locals.clientId as string;
    const request = parseOrThrow(InteractiveTransactionRequest, req.body);
    const linked = context.state.accounts.get(request.accountToken);
    if (!linked || linked.clientId !== clientId) {
      throw new HttpProblem(422, 'The accountToken was not issued by this service to this client.', {
        errors: [{ path: 'accountToken', message: 'unknown accountToken' }],
      });
    }
    if (linked.stale) {
      // The sandbox's reading of a stale account (docs/UPSTREAM.md D20): a 422 with its own errorCode.
      throw new HttpProblem(
        422,
        'The account holder must sign in at the bank again before this account can be debited.',
        {
          errorCode: REAUTHORIZATION_REQUIRED,
          errors: [{ path: 'accountToken', message: 'the account needs re-authorization' }],
        },
      );
    }
    const transactionId = randomId('txn_');
    const { merchantTransactionId } = request.merchant;
    context.state.transactions.set(transactionId, {
      transactionId,
      clientId,
      accountToken: request.accountToken,
      merchantTransactionId,
      amount: request.amount,
      currency: request.currency,
      createdAt: context.config.now(),
    });
    context.stats.transactions += 1;
    context.config.logger.info({ transactionId, merchantTransactionId }, 'transaction approved');
    res.status(201).json({ transactionId, transactionStatus: 'APPROVED', merchantTransactionId });
  });
  router.all(TRANSACTION_PATH, methodNotAllowed('POST'));
  return router;
}
