// The single mapping from any error to an application/problem+json response. Routes only throw.
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { z } from 'zod';
import {
  type FieldError,
  NotFoundProblem,
  PayloadTooLargeProblem,
  ProblemError,
  SessionStoreUnavailableProblem,
  ValidationProblem,
} from '../errors.ts';
import { SessionBackendUnavailableError } from '../sessions/errors.ts';
import {
  TokenError,
  UpstreamError,
  UpstreamHttpError,
  UpstreamTimeoutError,
} from '../upstream/errors.ts';
import { safeError } from '../logger.ts';
import { pathForLog } from '../sessions/ids.ts';
import type { ProxyMetrics } from '../metrics.ts';

/** zod issues → `[{path, message}]`, paths dotted (`consumer.email`), the root named `body`. */
export function fieldErrors(error: z.ZodError, prefix = ''): FieldError[] {
  return error.issues.map((issue) => {
    const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.') || 'body';
    return { path, message: issue.message };
  });
}

/** Throws a 400 naming every failing field, or returns the parsed value. */
export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string, prefix = ''): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = fieldErrors(result.error, prefix);
  throw new ValidationProblem(`${what} is invalid: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
}

/** Upstream problem details' field list, if the provider sent one in RFC 9457 style. */
function upstreamFieldErrors(body: unknown): FieldError[] | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const errors = (body as { errors?: unknown }).errors;
  if (!Array.isArray(errors)) return undefined;
  const fields = errors
    .filter((e): e is { path: unknown; message: unknown } => typeof e === 'object' && e !== null)
    .map((e) => ({ path: String(e.path ?? ''), message: String(e.message ?? '') }))
    .slice(0, 20);
  return fields.length > 0 ? fields : undefined;
}

/** Maps any thrown value to the problem the client sees. Upstream details stay in the log. */
export function toProblem(error: unknown): ProblemError {
  if (error instanceof ProblemError) return error;
  if (error instanceof SessionBackendUnavailableError) return new SessionStoreUnavailableProblem({ cause: error });
  if (error instanceof TokenError) {
    return new ProblemError(502, 'upstream-auth', 'Verification service unavailable',
      'The verification service refused this server\'s credentials. The operator has been told (see the server log).');
  }
  if (error instanceof UpstreamTimeoutError) {
    return new ProblemError(504, 'upstream-timeout', 'Verification service timed out', 'The verification service did not answer in time; try again.');
  }
  if (error instanceof UpstreamHttpError && (error.status === 400 || error.status === 422)) {
    return new ProblemError(422, 'upstream-rejected', 'Verification request rejected',
      'The verification service rejected the request.', upstreamFieldErrors(error.body));
  }
  if (error instanceof UpstreamError) {
    return new ProblemError(502, 'upstream-unavailable', 'Verification service unavailable', 'The verification service could not be used; try again.');
  }
  // body-parser's errors carry `type` and `status`.
  const { type, status, limit } = (error ?? {}) as { type?: unknown; status?: unknown; limit?: unknown };
  if (type === 'entity.too.large') return new PayloadTooLargeProblem(typeof limit === 'number' ? `${limit} bytes` : 'the limit');
  if (type === 'entity.parse.failed') {
    return new ValidationProblem('The request body is not valid JSON.', [{ path: 'body', message: 'must be valid JSON' }]);
  }
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ProblemError(status, 'bad-request', 'Bad request', 'The request could not be read.');
  }
  return new ProblemError(500, 'internal', 'Internal error', 'Something went wrong on the server.');
}

export function sendProblem(res: Response, problem: ProblemError): void {
  res.status(problem.status).type('application/problem+json').set('cache-control', 'no-store').set(problem.headers())
    .send(JSON.stringify(problem.toBody()));
}

/** Final error handler: logs server-side failures with their operator message, sends problem+json. */
export function problemHandler(logger: Logger, metrics?: Pick<ProxyMetrics, 'storeErrors'>): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const problem = toProblem(error);
    if (error instanceof SessionBackendUnavailableError) metrics?.storeErrors.inc();
    if (problem.status >= 500 || error instanceof UpstreamError) {
      logger.error({ err: safeError(error), method: req.method, path: pathForLog(req.originalUrl), status: problem.status },
        error instanceof Error ? error.message : 'request failed');
    }
    sendProblem(res, problem);
  };
}

/** JSON 404 for anything under the mount path that no route matched. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new NotFoundProblem(`No route for ${req.method} ${req.originalUrl.split('?')[0]}.`));
};
