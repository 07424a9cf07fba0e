// The last two handlers of the app: a problem+json 404 for unknown routes, and the one place every
// thrown error becomes a response (Express 5 forwards rejected async handlers here too).
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { ProviderLogger } from './logger.ts';
import { HttpProblem, sendProblem } from './problem.ts';

export const notFound: RequestHandler = (req, res) => {
  sendProblem(res, new HttpProblem(404, `No resource at ${req.method} ${req.path}.`));
};

/**
 * For a known path asked with another method: 405 with `Allow` (RFC 9110 §15.5.6), so a client that
 * GETs the token endpoint learns the method is wrong rather than that the path does not exist.
 */
export function methodNotAllowed(...allowed: string[]): RequestHandler {
  const allow = allowed.join(', ');
  return (req, res) => {
    res.set('Allow', allow);
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    sendProblem(res, new HttpProblem(405, `${req.path} accepts ${allow} only.`));
  };
}

/** body-parser's error `type`s a client can cause, and the problem each one is answered with. */
const BODY_PARSER_PROBLEMS: Record<string, () => HttpProblem> = {
  'entity.parse.failed': () =>
    new HttpProblem(400, 'The body is not valid JSON.', { errors: [{ path: '(body)', message: 'malformed JSON' }] }),
  'entity.too.large': () => new HttpProblem(413, 'The body is too large.'),
  'parameters.too.many': () => new HttpProblem(413, 'The body has too many parameters.'),
  'encoding.unsupported': () => new HttpProblem(415, 'The body encoding is not supported.'),
  'charset.unsupported': () => new HttpProblem(415, 'The body encoding is not supported.'),
  'request.aborted': () => new HttpProblem(400, 'The request was aborted.'),
};

/** Errors from body-parser carry `status` and `type`; map the ones a client can cause. */
function fromBodyParser(error: unknown): HttpProblem | undefined {
  if (typeof error !== 'object' || error === null || !('type' in error)) return undefined;
  const type = (error as { type: unknown }).type;
  return typeof type === 'string' && Object.hasOwn(BODY_PARSER_PROBLEMS, type)
    ? BODY_PARSER_PROBLEMS[type]?.()
    : undefined;
}

/** Other errors Express raises for a client's mistake (a bad %-escape in a path) carry a 4xx status. */
function fromClientError(error: unknown): HttpProblem | undefined {
  const status = typeof error === 'object' && error !== null ? (error as { status?: unknown }).status : undefined;
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  return new HttpProblem(400, 'The request could not be understood.', { status });
}

export function errorHandler(logger: ProviderLogger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const problem =
      error instanceof HttpProblem
        ? error
        : (fromBodyParser(error) ??
          fromClientError(error) ??
          new HttpProblem(500, 'The sandbox failed to handle this request.'));
    if (problem.status >= 500)
      logger.error({ method: req.method, path: req.path, err: String(error) }, 'request failed');
    if (res.headersSent) {
      res.end();
      return;
    }
    sendProblem(res, problem);
  };
}
