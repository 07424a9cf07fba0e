// The single mapping from any error to an application/problem+json response. Routes only throw.
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { problem, ProblemError } from '../common/errors.ts';
import { loggedFieldErrors } from '../upstream/provider-text.ts';
import { refusedFields } from '../upstream/refused-fields.ts';
import { DurabilityError, SessionBackendUnavailableError, StorageFullError } from '../storage/errors.ts';
import { UnsealError } from '../sealing/sealer.ts';
import { StoreOutageLog } from '../storage/outage-log.ts';
import {
  TokenError,
  TokenUnavailableError,
  UpstreamError,
  UpstreamHttpError,
  UpstreamTimeoutError,
} from '../upstream/errors.ts';
import { safeError } from '../common/logger.ts';
import { pathForLog } from '../common/ids.ts';
import type { ProxyMetrics } from '../common/metrics.ts';

/** body-parser's errors carry `type` and `status` (and `limit` when too large). */
function fromBodyParser(error: unknown): ProblemError | undefined {
  const { type, status, limit } = (error ?? {}) as { type?: unknown; status?: unknown; limit?: unknown };
  if (type === 'entity.too.large') {
    return problem(
      'payload-too-large',
      `The request body exceeds the limit of ${typeof limit === 'number' ? `${limit} bytes` : 'the limit'}.`,
    );
  }
  if (type === 'entity.parse.failed') {
    return problem('validation', 'The request body is not valid JSON.', {
      errors: [{ path: 'body', message: 'must be valid JSON' }],
    });
  }
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return problem('bad-request', 'The request could not be read.', { status });
  }
  return undefined;
}

/**
 * Maps any thrown value to the problem the client sees: the proxy's own problems as thrown, a session
 * store outage, the upstream failures (their details stay in the log), body-parser's errors, and a 500
 * for anything else.
 */
export function toProblem(error: unknown): ProblemError {
  if (error instanceof ProblemError) return error;
  if (error instanceof SessionBackendUnavailableError) {
    return problem(
      'session-store-unavailable',
      'The verification sessions cannot be read or stored right now; try again in a few seconds.',
      { cause: error },
    );
  }
  if (error instanceof DurabilityError) {
    // The operator's words (the failed fsync) are in the log; nothing of this request was acknowledged.
    return problem(
      'session-store-unavailable',
      'The server cannot store anything safely right now; nothing of this request was kept. Try again in a moment.',
      { cause: error },
    );
  }
  if (error instanceof StorageFullError) {
    // The operator's words (the directory, the free bytes) stay in the log's one line (storage/outage-log.ts).
    return problem(
      'storage-full',
      'The server cannot store anything right now (its storage is full); nothing of this request was kept. Try again later.',
      { cause: error },
    );
  }
  if (error instanceof UnsealError) {
    // A record this instance cannot open: during a key rotation another instance may have the key, so
    // the same request may succeed elsewhere; the log names the key id for the operator.
    return problem(
      'sealing-key-unavailable',
      'A stored credential cannot be opened by this server right now; try again shortly. The operator has been told (see the server log).',
      { cause: error },
    );
  }
  // The call was never sent for want of a token: answered as endpoint 1's own failure.
  if (error instanceof TokenUnavailableError) return toProblem(error.cause);
  if (error instanceof TokenError) {
    return problem(
      'upstream-auth',
      "The verification service refused this server's credentials. The operator has been told (see the server log).",
    );
  }
  if (error instanceof UpstreamTimeoutError)
    return problem('upstream-timeout', 'The verification service did not answer in time; try again.');
  if (error instanceof UpstreamHttpError && (error.status === 400 || error.status === 422)) {
    // The proxy's own words only: the provider's text may echo what it was sent (it goes to the log).
    const errors = refusedFields(error.body);
    return problem(
      'upstream-rejected',
      'The verification service rejected the request.',
      errors.length > 0 ? { errors } : {},
    );
  }
  if (error instanceof UpstreamError)
    return problem('upstream-unavailable', 'The verification service could not be used; try again.');
  return fromBodyParser(error) ?? problem('internal', 'Something went wrong on the server.');
}

export function sendProblem(res: Response, problem: ProblemError): void {
  res
    .status(problem.status)
    .type('application/problem+json')
    .set({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })
    .set(problem.headers())
    .send(JSON.stringify(problem.toBody()));
}

/**
 * Final error handler: logs server-side failures with their operator message, sends problem+json. A
 * session store outage or a full disk goes to `storeOutage` (one line per outage) instead of a line per request.
 */
export function problemHandler(
  logger: Logger,
  metrics?: Pick<ProxyMetrics, 'storeErrors'>,
  storeOutage?: StoreOutageLog,
): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const problem = toProblem(error);
    if (StoreOutageLog.covers(error)) metrics?.storeErrors.inc();
    if (storeOutage && StoreOutageLog.covers(error)) {
      storeOutage.refused('requests', error);
    } else if (problem.status >= 500 || error instanceof UpstreamError) {
      const providerErrors = error instanceof UpstreamHttpError ? loggedFieldErrors(error.body) : [];
      logger.error(
        {
          err: safeError(error),
          method: req.method,
          path: pathForLog(req.originalUrl),
          status: problem.status,
          ...(providerErrors.length > 0 ? { providerErrors } : {}),
        },
        error instanceof Error ? error.message : 'request failed',
      );
    }
    sendProblem(res, problem);
  };
}

/** JSON 404 for anything under the mount path that no route matched. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(problem('not-found', `No route for ${req.method} ${req.originalUrl.split('?')[0]}.`));
};
