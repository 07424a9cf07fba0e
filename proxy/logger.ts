// pino, with the fields that could carry a secret redacted wherever a log call puts them, and an error
// serialiser that keeps only name/message/code/status/stack (and the same for `cause`): ky's errors
// hold the request options, whose headers and JSON body may carry a bearer or an accountToken.
import pino, { type Logger, type LoggerOptions } from 'pino';

const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'accountToken',
  'access_token',
  'token',
  'clientSecret',
  'webhookSecret',
  'merchantApiKey',
  'secret',
  'password',
];

/** Redaction paths: the key itself and one or two levels down (`req.headers.authorization`). */
export const REDACT_PATHS = SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);

interface SafeError {
  type: string;
  message: string;
  code?: string;
  status?: number;
  stack?: string;
  cause?: SafeError;
}

/** A log-safe view of an error: no request options, headers or bodies. */
export function safeError(error: unknown, depth = 0): SafeError {
  if (!(error instanceof Error)) return { type: typeof error, message: String(error) };
  const { code, status } = error as { code?: unknown; status?: unknown };
  const safe: SafeError = { type: error.name, message: error.message };
  if (typeof code === 'string') safe.code = code;
  if (typeof status === 'number') safe.status = status;
  if (error.stack) safe.stack = error.stack;
  if (error.cause !== undefined && depth < 3) safe.cause = safeError(error.cause, depth + 1);
  return safe;
}

function serializeError(value: unknown): unknown {
  return value instanceof Error ? safeError(value) : value;
}

/** Creates the proxy's default logger. Pass `destination` to capture lines (tests). */
export function createLogger(level: LoggerOptions['level'] = 'info', destination?: pino.DestinationStream): Logger {
  const options: LoggerOptions = {
    name: 'obv-proxy',
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    // Already-safe objects (callers pass safeError(e) so that injected loggers are safe too) pass as-is.
    serializers: { err: serializeError, error: serializeError },
  };
  return destination ? pino(options, destination) : pino(options);
}
