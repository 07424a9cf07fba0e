// The proxy's configuration: one zod schema over a camelCase object, used both by code
// (`createObvProxy({...})`) and by the CLI (environment variables mapped onto it), so both paths get
// the same defaults and the same checks. A bad value is reported by its env name when it came from env.
// The settings themselves are in settings.ts, their forms in fields.ts and trust-proxy.ts, the production
// guardrails in guardrails.ts; here are the checks across settings and the two ways in.
import type { z } from 'zod';
import { withSandboxDefaults } from './sandbox-defaults.ts';
import { RECORD_GRACE_MS } from './limits.ts';
import { unknownVariables } from './unknown-variables.ts';
import { formatDuration } from './fields.ts';
import { ConfigFields } from './settings.ts';
import { productionGuardrails } from './guardrails.ts';
import { ENV_VARIABLES, envName } from './env.ts';

export const ProxyConfigSchema = ConfigFields.superRefine(
  (config, ctx) => {
    for (const key of ['publicUrl', 'notificationPublicUrl'] as const) {
      const value = config[key];
      if (!value || !URL.canParse(value)) continue;
      const url = new URL(value);
      // The per-session URLs are built by appending to it: a query or fragment would swallow the path.
      if (url.search || url.hash || value.includes('#') || value.includes('?')) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: 'must not have a query or fragment (the per-session paths are appended to it)',
        });
      }
      if (url.username || url.password)
        ctx.addIssue({ code: 'custom', path: [key], message: 'must not contain user:password@' });
    }
    if (config.sandbox !== true) productionGuardrails(config, ctx);
    if (config.merchantApiKey !== undefined && config.merchantApiKeys !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['merchantApiKeys'],
        message: 'is set with OBV_MERCHANT_API_KEY: use one of the two (put that key in the list, e.g. default:<key>)',
      });
    }
    if ((config.merchantApiKey || config.merchantApiKeys) && (!config.pgwAppId || !config.pgwClientId)) {
      for (const key of ['pgwAppId', 'pgwClientId'] as const) {
        if (!config[key])
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: 'is required when OBV_MERCHANT_API_KEY(S) enables transactions',
          });
      }
    }
    if (
      config.eventsUrl &&
      URL.canParse(config.eventsUrl) &&
      (new URL(config.eventsUrl).username || new URL(config.eventsUrl).password)
    ) {
      // fetch refuses such a URL; the signature is what proves an event is the proxy's.
      ctx.addIssue({
        code: 'custom',
        path: ['eventsUrl'],
        message: 'must not contain user:password@ (your endpoint checks the signature instead)',
      });
    }
    if (config.eventsUrl && !config.eventsSecrets) {
      ctx.addIssue({
        code: 'custom',
        path: ['eventsSecrets'],
        message: 'is required with an events URL (the events are signed with it)',
      });
    }
    // A link reference lives as long as its session's record; an order must be remembered longer, or the
    // same reference could pay it a second time once the first payment is forgotten.
    const referenceLifeMs = config.sessionTtlMs + RECORD_GRACE_MS + config.upstreamTimeoutMs;
    if (
      typeof config.paymentRetentionMs === 'number' &&
      typeof config.sessionTtlMs === 'number' &&
      config.paymentRetentionMs < referenceLifeMs
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['paymentRetentionMs'],
        message: `must be at least the session lifetime + 1 h (${Math.ceil(referenceLifeMs / 3_600_000)}h here), or a link reference could pay its order twice`,
      });
    }
    linkSessionWithinRetention(config, referenceLifeMs, ctx);
    storageChecks(config, ctx);
    if (config.notificationPort !== undefined && !config.notificationPublicUrl) {
      ctx.addIssue({
        code: 'custom',
        path: ['notificationPublicUrl'],
        message: 'is required with a notification port (it is the URL the provider posts to)',
      });
    }
  },
  {
    // Also when some fields failed: every problem is reported in one round, not the rest after a fix.
    // Fields that failed keep their raw input here, so each check guards the type it reads.
    when: () => true,
  },
).transform((config) => ({
  ...config,
  gatewayUrl: config.gatewayUrl ?? config.baseUrl,
  bindBankStep: config.bindBankStep ?? !config.sandbox,
  host: config.host ?? (config.sandbox ? '127.0.0.1' : undefined),
  storage:
    config.storage ??
    (config.databaseUrl ? ('postgres' as const) : config.redisUrl ? ('redis' as const) : ('sqlite' as const)),
}));

/**
 * Durable storage unless told otherwise: memory loses every payment, session and event at a restart, so
 * outside sandbox mode it needs OBV_ALLOW_VOLATILE_STORAGE=true; postgres and redis need their URL, and
 * only the chosen backend's URL may be set (a second one would be ignored: a mistake to say, not guess).
 */
function storageChecks(config: Partial<ConfigFields>, ctx: z.RefinementCtx): void {
  if (config.redisSentinels && !config.redisSentinelName) {
    ctx.addIssue({
      code: 'custom',
      path: ['redisSentinelName'],
      message: 'is required with OBV_REDIS_SENTINELS: the name Sentinel monitors the primary under',
    });
  }
  if ((config.redisSentinels || config.redisSentinelName) && !config.redisUrl) {
    ctx.addIssue({
      code: 'custom',
      path: ['redisUrl'],
      message:
        'is required with OBV_REDIS_SENTINELS: it gives the password, database and TLS (redis://:password@any-name/0; its host is not used)',
    });
  }
  if (config.storage === 'redis' && !config.redisUrl) {
    ctx.addIssue({ code: 'custom', path: ['redisUrl'], message: 'is required with OBV_STORAGE=redis' });
  }
  if (config.storage === 'postgres' && !config.databaseUrl) {
    ctx.addIssue({ code: 'custom', path: ['databaseUrl'], message: 'is required with OBV_STORAGE=postgres' });
  }
  if (config.storage === undefined && config.redisUrl && config.databaseUrl) {
    ctx.addIssue({
      code: 'custom',
      path: ['storage'],
      message:
        'is unset while both OBV_DATABASE_URL and OBV_REDIS_URL are set: choose one (OBV_STORAGE=postgres or redis), or unset the other URL',
    });
  }
  if (config.storage !== undefined && config.storage !== 'redis' && config.redisUrl) {
    ctx.addIssue({
      code: 'custom',
      path: ['storage'],
      message: `is ${config.storage} while OBV_REDIS_URL is set: choose one (leave OBV_STORAGE unset to use Redis)`,
    });
  }
  if (config.storage !== undefined && config.storage !== 'postgres' && config.databaseUrl) {
    ctx.addIssue({
      code: 'custom',
      path: ['storage'],
      message: `is ${config.storage} while OBV_DATABASE_URL is set: choose one (leave OBV_STORAGE unset to use PostgreSQL)`,
    });
  }
  if (config.storage === 'memory' && config.sandbox !== true && config.allowVolatileStorage !== true) {
    ctx.addIssue({
      code: 'custom',
      path: ['storage'],
      message:
        'is memory: a restart would lose every payment (an order could be paid twice), session and merchant event. ' +
        'Use sqlite (the default, OBV_DATA_DIR), postgres or redis, or set OBV_ALLOW_VOLATILE_STORAGE=true if you accept that',
    });
  }
}

/**
 * A link token starts verifications until its order is paid, and "paid" is the payment record: once the
 * record is forgotten (OBV_PAYMENT_RETENTION), a live link token would start a new verification whose
 * link reference pays the same order again. The last reference a link token can make lives until
 * link-session lifetime + reference life (session lifetime + record grace + upstream time-out) after
 * the link session was made, and the order may be paid at its very start: so that much must lie well
 * inside the retention. Half of it, so shortening the retention later, or instances whose clocks differ,
 * still leave every reference long dead before its payment is forgotten.
 */
function linkSessionWithinRetention(config: ConfigFields, referenceLifeMs: number, ctx: z.RefinementCtx): void {
  const { linkSessionTtlMs, paymentRetentionMs } = config;
  if (
    typeof linkSessionTtlMs !== 'number' ||
    typeof paymentRetentionMs !== 'number' ||
    !Number.isFinite(referenceLifeMs)
  )
    return;
  if (linkSessionTtlMs + referenceLifeMs <= paymentRetentionMs / 2) return;
  const most = paymentRetentionMs / 2 - referenceLifeMs;
  ctx.addIssue({
    code: 'custom',
    path: ['linkSessionTtlMs'],
    message: `must end well inside the payment retention: with the session lifetime + 1 h it may take at most half of OBV_PAYMENT_RETENTION (${
      most > 0 ? `at most ${formatDuration(most)} here` : 'OBV_PAYMENT_RETENTION is too short for any'
    }), or its order could be paid again once the payment is forgotten`,
  });
}

/** What `createObvProxy` accepts (before defaults). */
export type ProxyConfigInput = z.input<typeof ProxyConfigSchema>;
/** The validated configuration, defaults applied. */
export type ProxyConfig = z.output<typeof ProxyConfigSchema>;

/** Thrown for an invalid configuration; the message lists every bad setting, one per line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly issues: { setting: string; message: string }[]) {
    super(
      `Invalid obv-link proxy configuration:\n${issues.map((issue) => `  - ${issue.setting}: ${issue.message}`).join('\n')}`,
    );
  }
}

type ConfigIssue = { setting: string; message: string };

/**
 * Every problem of one parse, named. The cross-field checks run even over fields that failed; a field
 * whose own value was refused gets only that message, not a second one about the same value.
 */
function issuesOf(error: z.ZodError, prepared: object, input: object, name: (key: string) => string): ConfigIssue[] {
  const fieldIssues = ConfigFields.safeParse(prepared).error?.issues ?? [];
  const fieldKeys = new Set(fieldIssues.map((issue) => String(issue.path[0])));
  const isFieldIssue = (issue: z.core.$ZodIssue) =>
    fieldIssues.some((own) => own.message === issue.message && String(own.path) === String(issue.path));
  return error.issues
    .filter((issue) => isFieldIssue(issue) || !fieldKeys.has(String(issue.path[0])))
    .map((issue) => {
      const key = String(issue.path[0] ?? '(config)');
      // A missing value fails its type check; a custom check on it (OBV_PGW_APP_ID with an API key) says why it is needed.
      const missing =
        issue.code !== 'custom' && issue.path.length === 1 && (input as Record<string, unknown>)[key] === undefined;
      const message = missing ? 'is required' : issue.message;
      return { setting: name(key), message };
    });
}

function fail(error: z.ZodError, prepared: object, input: object, name: (key: string) => string): never {
  throw new ConfigError(issuesOf(error, prepared, input, name));
}

/** Validates a config object (code use). Throws ConfigError naming each bad key. */
export function parseProxyConfig(input: ProxyConfigInput): ProxyConfig {
  const prepared = withSandboxDefaults(input);
  const result = ProxyConfigSchema.safeParse(prepared);
  if (!result.success) fail(result.error, prepared, input, (key) => key);
  return result.data;
}

/** Reads the configuration from environment variables. Throws ConfigError naming each bad variable. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ProxyConfig {
  const input: Record<string, string> = {};
  for (const [name, key] of Object.entries(ENV_VARIABLES)) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') input[key] = value;
  }
  const prepared = withSandboxDefaults(input);
  const result = ProxyConfigSchema.safeParse(prepared);
  const unknown = unknownVariables(env, Object.keys(ENV_VARIABLES));
  const issues = result.success ? [] : issuesOf(result.error, prepared, input, envName);
  if (unknown.length > 0 || !result.success) throw new ConfigError([...issues, ...unknown]);
  return result.data;
}
