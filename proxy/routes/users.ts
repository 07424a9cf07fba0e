// DELETE /users/:merchantUserId — for the merchant's SERVER only (its API key): forgets a merchant user
// for an erasure request (accounts/forget-user.ts), as `proxy.forgetUser` does. Answers what it erased,
// counted, never the data.
import express, { type RequestHandler, type Router } from 'express';
import { ForgottenUserSchema, MerchantUserId, type ForgetUser } from '../accounts/forget-user.ts';
import { parseOrThrow } from '../common/validation.ts';
import { COMMON_PROBLEMS, MERCHANT_AUTH_PROBLEMS, type Operation, STORE_PROBLEMS } from '../openapi/operation.ts';

export const usersOperations: Operation[] = [
  {
    method: 'delete',
    path: '/users/:merchantUserId',
    operationId: 'forgetUser',
    summary: 'Forget a merchant user: an erasure request (your server)',
    description:
      'Every saved account sealed for the user until now is refused from then on (a link session naming one answers 410), ' +
      "their sessions and link sessions are deleted (consent records, the consumer's name and e-mail), the saved accounts " +
      'and consent records in merchant events erased, their payments kept with only what a reconciliation needs. One ' +
      '`saved_account.removed` event (`reason: "forgotten"`) per saved account the proxy held. Delete your own copies of ' +
      "the user's saved accounts too. Idempotent: a second call answers 0 everywhere. Present only when " +
      'OBV_MERCHANT_API_KEY is set.',
    caller: 'merchant server',
    security: 'merchantApiKey',
    pathParams: {
      merchantUserId: MerchantUserId.meta({ description: 'The user id your server gave its link sessions' }),
    },
    responses: {
      200: {
        description: 'What was erased, counted',
        content: { 'application/json': ForgottenUserSchema },
      },
    },
    problems: {
      ...MERCHANT_AUTH_PROBLEMS,
      400: 'The user id is blank or longer than 100 characters (`errors` names `merchantUserId`).',
      ...STORE_PROBLEMS,
      ...COMMON_PROBLEMS,
    },
  },
];

/** `merchantAuth`: the API-key check shared with the other server routes (http/merchant-auth.ts). */
export function usersRouter(deps: { forgetUser: ForgetUser }, merchantAuth: RequestHandler[]): Router {
  const router = express.Router();
  router.delete('/users/:merchantUserId', ...merchantAuth, async (req, res) => {
    const merchantUserId = parseOrThrow(
      MerchantUserId,
      String(req.params.merchantUserId),
      'The merchant user id',
      'merchantUserId',
    );
    res.set('cache-control', 'no-store').json(await deps.forgetUser(merchantUserId));
  });
  return router;
}
