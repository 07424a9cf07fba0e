// The settings as `npx obv-link-proxy --help` lists them: one line each, its environment name (env.ts),
// whether it is required or its default (read from the settings' own schema, settings.ts, so the two
// cannot drift) and what it is for. docs/PROXY.md's configuration table says the same at length.
import { ENV_VARIABLES } from './env.ts';
import { formatDuration } from './fields.ts';
import { ConfigFields } from './settings.ts';

type EnvName = keyof typeof ENV_VARIABLES;

/** What each setting is for, in a few words. Typed by the env names: a new setting without a line does not compile. */
const PURPOSE: Record<EnvName, string> = {
  OBV_BASE_URL: "the provider's host of the token and verification endpoints (from the provider; sandbox: :4010)",
  OBV_GATEWAY_URL: "the provider's host of the transaction endpoint (default OBV_BASE_URL)",
  OBV_CLIENT_ID: 'OAuth client id the provider gave you',
  OBV_CLIENT_SECRET: 'OAuth client secret the provider gave you',
  OBV_TOKEN_SCOPE: 'scope asked for at the token endpoint',
  OBV_TRANSACTION_SCOPE: "a separate scope for the transaction endpoint's token (unset: reuse the verification token)",
  OBV_PUBLIC_URL: "the proxy's public https URL, as browsers and the provider reach it (sandbox: :$PORT)",
  OBV_MOUNT_PATH: 'where the routes are mounted',
  OBV_WEBHOOK_SECRET: 'whsec_ secret the provider signs notifications with',
  OBV_ALLOWED_ORIGINS: "comma list of page origins allowed besides the proxy's own",
  OBV_MERCHANT_ID: 'your merchant id at the provider',
  OBV_MERCHANT_SUB_ID: 'your merchant sub-id at the provider',
  OBV_HOSTED_REDIRECT_SCHEMES: 'custom URI schemes a hosted link page may return to',
  OBV_MERCHANT_NAME: "your shop's name as shoppers know it",
  OBV_PRODUCT: 'transaction.product sent upstream',
  OBV_TRANSACTION_REGION: 'transaction.transactionRegion sent upstream',
  OBV_PGW_APP_ID: 'x-pgw-app-id of the transaction endpoint (required with a merchant API key)',
  OBV_PGW_CLIENT_ID: 'x-pgw-client-id of the transaction endpoint (required with a merchant API key)',
  OBV_MERCHANT_API_KEY: 'bearer key your server uses on the server-only routes (unset: those routes are off)',
  OBV_MERCHANT_API_KEYS: 'several keys at once for a rotation: id:key,id:key',
  OBV_EVENTS_URL: "your server's URL for signed merchant events (unset: no events)",
  OBV_EVENTS_SECRETS: 'comma list of whsec_ secrets signing merchant events (required with OBV_EVENTS_URL)',
  OBV_SUCCESS_STATUSES: 'verificationStatus values that mean success',
  OBV_FAILURE_STATUSES: 'verificationStatus values that mean failure',
  OBV_PAID_TRANSACTION_STATUSES: 'transactionStatus values that mean paid',
  OBV_DECLINED_TRANSACTION_STATUSES: 'transactionStatus values that mean declined (nothing charged)',
  OBV_REAUTHORIZATION_CODES: 'transaction error codes that mean the shopper must re-authorize',
  OBV_SESSION_TTL: 'how long a session waits for its outcome',
  OBV_SEALING_KEYS: 'id:base64 keys sealing stored account tokens (required outside sandbox mode)',
  OBV_LINK_SESSION_TTL: 'how long a link token may start a verification',
  OBV_PAYMENT_RETENTION: 'how long a paid order is remembered',
  OBV_UPSTREAM_TIMEOUT: 'time-out of each call to the provider',
  OBV_SANDBOX: 'true: the local sandbox (plain http, published secrets, said loudly)',
  OBV_BIND_BANK_STEP: 'bind each bank step to its browser (default true outside sandbox mode)',
  OBV_REDIS_URL: 'Redis for several instances (redis:// or rediss://)',
  OBV_REDIS_PREFIX: 'prefix of every Redis key',
  OBV_REDIS_MIN_REPLICAS: 'Redis replicas that must have each money write before it is answered (default 0)',
  OBV_REDIS_REPLICA_TIMEOUT: 'how long a money write waits for them before it answers 503 (default 1s)',
  OBV_REDIS_SENTINELS: 'Redis Sentinel host:port list: the primary is whichever it names, followed across failovers',
  OBV_REDIS_SENTINEL_NAME: 'the name Sentinel monitors the primary under (required with OBV_REDIS_SENTINELS)',
  OBV_STORAGE:
    'sqlite, postgres, redis or memory (default sqlite; postgres with OBV_DATABASE_URL, redis with OBV_REDIS_URL)',
  OBV_DATABASE_URL: 'PostgreSQL for several instances (postgres://user:password@host:port/database)',
  OBV_DATABASE_SCHEMA: "the PostgreSQL schema of the proxy's tables (default obv_link)",
  OBV_DATABASE_POOL_SIZE: 'PostgreSQL connections per instance at most (default 10)',
  OBV_DATABASE_STATEMENT_TIMEOUT: 'a PostgreSQL statement running longer is cancelled (default 5s)',
  OBV_DATA_DIR: "the SQLite storage's directory (created 0700)",
  OBV_ALLOW_VOLATILE_STORAGE: 'true lets production run OBV_STORAGE=memory',
  OBV_RATE_LIMIT: 'verification starts per client address per minute (0: off)',
  OBV_TRUST_PROXY: 'Express trust proxy: a hop count or addresses',
  OBV_AUTH_FAILURE_LIMIT: 'wrong API keys per client address per 15 minutes before 429 (0: off)',
  OBV_WS_MAX_PER_SESSION: 'WebSockets per session',
  OBV_WS_MAX_PER_CLIENT: 'WebSockets per client address',
  OBV_WS_MAX_TOTAL: 'WebSockets per instance (default 10000, or less to fit the file limit)',
  OBV_HEADERS_TIMEOUT: 'a client must send its headers within this',
  OBV_REQUEST_TIMEOUT: 'a whole request must arrive within this',
  OBV_NOTIFICATION_PUBLIC_URL: "public URL of a separate listener for the provider's notifications",
  OBV_NOTIFICATION_PORT: 'port of that listener',
  OBV_METRICS_PORT: 'port of the Prometheus /metrics listener (unset: none)',
  OBV_METRICS_HOST: 'address the metrics listener binds to',
  OBV_SHUTDOWN_TIMEOUT: 'after the drain window, how long requests may take to finish',
  OBV_DRAIN_WINDOW: 'after SIGTERM, how long /readyz answers 503 before the listener closes',
  OBV_LOG_LEVEL: 'fatal, error, warn, info, debug, trace or silent',
  HOST: 'the address to listen on (unset: every interface; 127.0.0.1 in sandbox mode)',
  PORT: 'the port to listen on',
};

/** How a default reads in the help: durations as 15m, lists comma-joined. */
function shown(key: string, value: unknown): string {
  if (typeof value === 'number' && key.endsWith('Ms')) return formatDuration(value);
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.join(',');
  return String(value);
}

/** "required", "default …" or "" (optional, no default) for one setting, from its schema field alone. */
export function settingDefault(name: EnvName): string {
  const key = ENV_VARIABLES[name];
  const parsed = ConfigFields.shape[key].safeParse(undefined);
  if (!parsed.success) return 'required';
  return parsed.data === undefined ? '' : `default ${shown(key, parsed.data)}`;
}

/** One line per setting: name, required or default, purpose. */
export function settingsHelp(): string {
  const names = Object.keys(ENV_VARIABLES) as EnvName[];
  const width = Math.max(...names.map((name) => name.length)) + 2;
  return names
    .map((name) => {
      const when = settingDefault(name);
      return `  ${name.padEnd(width)}${PURPOSE[name]}${when ? ` [${when}]` : ''}`;
    })
    .join('\n');
}
