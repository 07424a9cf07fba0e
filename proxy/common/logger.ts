// pino, with the fields that could carry a secret redacted wherever a log call puts them, and an error
// serialiser that keeps only name/message/code/status/stack (and the same for `cause`): ky's errors
// hold the request options, whose headers and JSON body may carry a bearer or an accountToken.
// Redaction is a walk over each line's object (formatters.log), not pino's `redact` paths: those are the
// same keys at the same depths (test/node/proxy/log-redaction.test.ts compares the two line by line), but
// measured on the notification route's info line `redact` took 40–120 µs a line against 2–3 µs for the
// walk (2026-11-23), on every notification: the docs/PERFORMANCE.md figure "server CPU per notification"
// depends on it. When `redact` no longer shows in that figure, delete the walk and the child/setBindings
// wrapper below and pass `redact: { paths: REDACT_PATHS, censor: '[redacted]' }` (it covers children).
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
  'merchantApiKeys',
  'sealingKeys',
  'sealedAccountToken',
  'linkToken',
  'secret',
  'password',
];

/** Redaction paths: the key itself and one or two levels down (`req.headers.authorization`). */
export const REDACT_PATHS = SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);

const SECRET_KEY_SET: ReadonlySet<string> = new Set(SECRET_KEYS);
const CENSOR = '[redacted]';
/** Deepest level whose keys are checked: 0 is the logged object itself (as REDACT_PATHS). */
const REDACT_DEPTH = 2;

/**
 * `value` with every secret-named key at depth 0–2 replaced by `[redacted]` — what pino's `redact`
 * with REDACT_PATHS does. Returns copies along the changed branches only (the caller's object is
 * never modified) and `value` itself when nothing is secret, so the usual line allocates nothing.
 */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const source = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(source)) {
    const inner = source[key];
    const next = SECRET_KEY_SET.has(key) ? CENSOR : depth < REDACT_DEPTH ? redactSecrets(inner, depth + 1) : inner;
    if (next !== inner) {
      copy ??= (Array.isArray(source) ? [...source] : { ...source }) as Record<string, unknown>;
      copy[key] = next;
    }
  }
  return copy ?? value;
}

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

/**
 * A line's own object: errors made safe first (so an Error is never copied key by key), then redacted.
 * pino's `serializers` still run afterwards and leave these already-safe values as they are.
 */
function formatLogObject(object: Record<string, unknown>): Record<string, unknown> {
  let line = object;
  for (const key of ['err', 'error']) {
    if (line[key] instanceof Error) line = { ...line, [key]: safeError(line[key]) };
  }
  return redactSecrets(line) as Record<string, unknown>;
}

/** Creates the proxy's default logger. Pass `destination` to capture lines (tests). */
export function createLogger(level: LoggerOptions['level'] = 'info', destination?: pino.DestinationStream): Logger {
  const options: LoggerOptions = {
    name: 'obv-proxy',
    level,
    formatters: {
      log: formatLogObject,
      bindings: (bindings) => redactSecrets(bindings) as Record<string, unknown>,
    },
    // Already-safe objects (callers pass safeError(e) so that injected loggers are safe too) pass as-is.
    serializers: { err: serializeError, error: serializeError },
  };
  const logger = destination ? pino(options, destination) : pino(options);
  // pino applies `formatters.bindings` to the root's bindings only (children get an identity formatter),
  // so child() and setBindings() redact their bindings here, as `redact` would. Children inherit these
  // two own properties, so grandchildren are covered too. Goes with the walk (see the top of this file).
  const child = logger.child as unknown as (
    this: Logger,
    bindings: pino.Bindings,
    options?: pino.ChildLoggerOptions,
  ) => Logger;
  const setBindings = logger.setBindings;
  Object.assign(logger, {
    child(this: Logger, bindings: pino.Bindings, childOptions?: pino.ChildLoggerOptions) {
      return child.call(this, redactSecrets(bindings) as pino.Bindings, childOptions);
    },
    setBindings(this: Logger, bindings: pino.Bindings) {
      setBindings.call(this, redactSecrets(bindings) as pino.Bindings);
    },
  });
  return logger;
}
