// The sandbox controls over HTTP (controls.ts has the rules): POST /sandbox/controls/<control> with a JSON
// body, GET /sandbox/controls for the status. Sandbox-only routes of this app, never of a real provider.
// They want the sandbox's own client credentials (HTTP Basic, as endpoint 1), so a stray page cannot flip
// them: a browser sends no Authorization header cross-origin without a CORS preflight, which these routes
// never grant.
import type { Request, RequestHandler, Response } from 'express';
import { Router } from 'express';
import type { z } from 'zod';
import type { ProviderContext } from './context.ts';
import {
  apply,
  controlsStatus,
  DelayInput,
  FailNextInput,
  NotifyLateInput,
  NotifyTwiceInput,
  ResetInput,
  StaleInput,
  staleCandidates,
  TimeoutInput,
} from './controls.ts';
import { methodNotAllowed } from './error-handlers.ts';
import { requireJsonBody } from './json-body.ts';
import { HttpProblem, parseOrThrow } from './problem.ts';
import { SANDBOX_REALM } from './sandbox-data.ts';
import { secretsMatch } from './secrets.ts';

export const CONTROLS_PATH = '/sandbox/controls';

function unauthorized(detail: string): HttpProblem {
  return new HttpProblem(401, detail, {
    headers: { 'WWW-Authenticate': `Basic realm="${SANDBOX_REALM}", charset="UTF-8"` },
  });
}

/** The client named by `Authorization: Basic base64(id:secret)`; a registered, active client only. */
function requireClient(context: ProviderContext): RequestHandler {
  return (req, res, next) => {
    const match = /^Basic +([A-Za-z0-9+/=_-]+)$/i.exec(req.get('authorization')?.trim() ?? '');
    if (!match?.[1])
      throw unauthorized(
        'The sandbox controls want the sandbox client credentials (Authorization: Basic, as the token endpoint).',
      );
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    let clientId = '';
    let clientSecret = '';
    try {
      clientId = decodeURIComponent(decoded.slice(0, Math.max(colon, 0)));
      clientSecret = decodeURIComponent(decoded.slice(colon + 1));
    } catch {
      throw unauthorized('The Basic credentials are not correctly encoded.');
    }
    const client = context.config.clients.find((candidate) => candidate.clientId === clientId);
    // Compared even for an unknown id, so timing does not tell which ids exist.
    const secretOk = secretsMatch(clientSecret, client?.clientSecret ?? '\u0000');
    if (colon < 1 || !client || !secretOk || client.standing !== 'active')
      throw unauthorized('The client credentials are not those of an active sandbox client.');
    res.locals.clientId = client.clientId;
    next();
  };
}

/** A JSON body when one is sent; none at all reads as `{}` (reset, notify-twice). */
const optionalJsonBody: RequestHandler = (req, res, next) => {
  const hasBody =
    req.get('transfer-encoding') !== undefined ||
    Number(req.get('content-length') ?? 0) > 0 ||
    req.get('content-type') !== undefined;
  if (hasBody) requireJsonBody(req, res, next);
  else next();
};

const bodyOf = (req: Request): unknown => req.body ?? {};

export function controlRouter(context: ProviderContext): Router {
  const router = Router();
  const auth = requireClient(context);
  const answer = (res: Response, extra: object = {}) => {
    res.set('Cache-Control', 'no-store');
    res.json({ ...extra, controls: controlsStatus(context, res.locals.clientId as string) });
  };
  /** One control: validate the body with `schema`, apply it, answer with the status. */
  const control = <Schema extends z.ZodType>(
    name: string,
    schema: Schema,
    run: (input: z.output<Schema>, clientId: string) => void,
  ) => {
    router.post(`${CONTROLS_PATH}/${name}`, auth, optionalJsonBody, (req, res) => {
      const input = parseOrThrow(schema, bodyOf(req));
      run(input, res.locals.clientId as string);
      context.config.logger.info({ control: name, clientId: res.locals.clientId }, 'sandbox control set');
      answer(res);
    });
    router.all(`${CONTROLS_PATH}/${name}`, methodNotAllowed('POST'));
  };

  router.get(CONTROLS_PATH, auth, (_req, res) => answer(res));
  router.post(`${CONTROLS_PATH}/stale`, auth, optionalJsonBody, (req, res) => {
    const filter = parseOrThrow(StaleInput, bodyOf(req));
    const accounts = staleCandidates(context, filter, res.locals.clientId as string);
    if (accounts.length === 0 && (filter.consumer !== undefined || filter.accountToken !== undefined)) {
      const field = filter.accountToken !== undefined ? 'accountToken' : 'consumer';
      throw new HttpProblem(
        422,
        `No account linked for this client matches the ${field}: link one at the bank page first.`,
        {
          errors: [{ path: field, message: 'no linked account matches' }],
        },
      );
    }
    for (const account of accounts) account.stale = true;
    context.config.logger.info(
      { control: 'stale', clientId: res.locals.clientId, marked: accounts.length },
      'sandbox control set',
    );
    answer(res, { marked: accounts.length });
  });
  router.all(`${CONTROLS_PATH}/stale`, methodNotAllowed('POST'));
  control('fail-next', FailNextInput, (input) => apply.failNext(context, input));
  control('delay', DelayInput, (input) => apply.delay(context, input));
  control('timeout', TimeoutInput, (input) => apply.timeout(context, input));
  control('notify-late', NotifyLateInput, (input) => apply.notifyLate(context, input));
  control('notify-twice', NotifyTwiceInput, (input) => apply.notifyTwice(context, input));
  control('reset', ResetInput, (_input, clientId) => apply.reset(context, clientId));
  router.all(CONTROLS_PATH, methodNotAllowed('GET', 'HEAD'));
  return router;
}
