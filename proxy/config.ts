// The proxy's configuration: one zod schema over a camelCase object, used both by code
// (`createObvProxy({...})`) and by the CLI (environment variables mapped onto it), so both paths get
// the same defaults and the same checks. A bad value is reported by its env name when it came from env.
import { z } from 'zod';
import { withSandboxDefaults } from './sandbox-defaults.ts';
import { DEFAULT_REDIS_PREFIX } from './sessions/redis-keys.ts';

const DURATION = /^(\d+)(ms|s|m|h)?$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** "30m", "90s", "1500ms", "2h", or a bare number of seconds → milliseconds. Numbers are taken as ms. */
const Duration = z.union([
  z.number().int().positive(),
  z
    .string()
    .trim()
    .regex(DURATION, 'must be a duration such as 30m, 90s, 1500ms or a number of seconds')
    .transform((value) => {
      const [, amount, unit] = DURATION.exec(value) ?? [];
      return Number(amount) * UNIT_MS[(unit ?? 's') as keyof typeof UNIT_MS];
    })
    .pipe(z.number().int().positive('must be greater than zero')),
]);

const Bool = z.union([
  z.boolean(),
  z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(['true', 'false', '1', '0', 'yes', 'no', '']))
    .transform((value) => value === 'true' || value === '1' || value === 'yes'),
]);

const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' });

const Origin = z
  .string()
  .trim()
  .pipe(HttpUrl)
  .refine((value) => new URL(value).origin === value.replace(/\/$/, ''), 'must be an origin (scheme://host[:port]) without a path')
  .transform((value) => new URL(value).origin);

const OriginList = z.union([
  z.array(Origin),
  z
    .string()
    .transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean))
    .pipe(z.array(Origin)),
]);

const Text = z.string().trim().min(1, 'must not be empty');

/** `true`/`false`, a hop count, or a comma list of addresses/subnets: Express's `trust proxy` values. */
const TrustProxy = z.union([
  z.boolean(),
  z.number().int().nonnegative(),
  z
    .string()
    .trim()
    .min(1)
    .transform((value): boolean | number | string => {
      if (value === 'true') return true;
      if (value === 'false') return false;
      return /^\d+$/.test(value) ? Number(value) : value;
    }),
]);

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const ProxyConfigSchema = z
  .object({
    /** `{base_url}`: host of the token and verification endpoints. */
    baseUrl: HttpUrl,
    /** `{gateway_url}`: host of the transaction endpoint. Defaults to `baseUrl`. */
    gatewayUrl: HttpUrl.optional(),
    clientId: Text,
    clientSecret: Text,
    tokenScope: Text.default('obv/token-request'),
    /** Scope for the transaction endpoint's token; when unset the verification token is reused. */
    transactionScope: Text.optional(),
    /** The proxy's own public origin (+ optional path prefix), as the provider and browsers reach it. */
    publicUrl: HttpUrl,
    /** Where the router is mounted; part of the per-session return/notification URLs and the WS path. */
    mountPath: z
      .string()
      .regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be a path such as /obv (no trailing slash), or empty')
      .default('/obv'),
    /** Standard Webhooks secret (`whsec_…`) shared with the provider. */
    webhookSecret: Text.regex(/^whsec_[A-Za-z0-9+/=]+$/, 'must be a Standard Webhooks secret: whsec_ followed by base64'),
    allowedOrigins: OriginList.default([]),
    merchantId: Text,
    merchantSubId: Text.optional(),
    product: Text.default('ACH'),
    transactionRegion: Text.optional(),
    pgwAppId: Text.optional(),
    pgwClientId: Text.optional(),
    /** Bearer key the merchant's server uses for POST /transactions; the route is off without it. */
    merchantApiKey: z.string().trim().min(24, 'must be at least 24 characters').optional(),
    sessionTtlMs: Duration.default(30 * 60_000),
    upstreamTimeoutMs: Duration.default(10_000),
    /** Allow plain-http upstream URLs (the local sandbox). */
    sandbox: Bool.default(false),
    redisUrl: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).optional(),
    /** Prefix of every Redis key and of the events channel, so deployments can share one Redis. */
    redisPrefix: z
      .string()
      .regex(/^[A-Za-z0-9:._-]{1,32}$/, 'must be 1-32 characters of letters, digits, ":", ".", "_" or "-" (no spaces)')
      .default(DEFAULT_REDIS_PREFIX),
    /** Verification starts per client IP per minute; 0 turns the limit off. */
    rateLimit: z.coerce.number<unknown>({ error: 'must be a whole number' }).int().nonnegative().default(30),
    /** Express `trust proxy`; when unset, the app the router is mounted in decides. */
    trustProxy: TrustProxy.optional(),
    logLevel: z.enum(LOG_LEVELS).default('info'),
    port: z.coerce.number<unknown>({ error: 'must be a port number' }).int().min(0).max(65_535).default(3000),
  })
  .superRefine((config, ctx) => {
    if (!config.sandbox) {
      for (const key of ['baseUrl', 'gatewayUrl', 'publicUrl'] as const) {
        // Refinements run even when a field already failed, so the URL may not parse.
        const value = config[key];
        if (value && URL.canParse(value) && new URL(value).protocol !== 'https:') {
          ctx.addIssue({ code: 'custom', path: [key], message: 'must use https (the spec allows HTTPS only; set OBV_SANDBOX=true for a local http sandbox)' });
        }
      }
    }
    if (config.merchantApiKey && (!config.pgwAppId || !config.pgwClientId)) {
      for (const key of ['pgwAppId', 'pgwClientId'] as const) {
        if (!config[key]) ctx.addIssue({ code: 'custom', path: [key], message: 'is required when OBV_MERCHANT_API_KEY enables transactions' });
      }
    }
  })
  .transform((config) => ({ ...config, gatewayUrl: config.gatewayUrl ?? config.baseUrl }));

/** What `createObvProxy` accepts (before defaults). */
export type ProxyConfigInput = z.input<typeof ProxyConfigSchema>;
/** The validated configuration, defaults applied. */
export type ProxyConfig = z.output<typeof ProxyConfigSchema>;

/** Environment variable → config key. The README's configuration table lists the same names. */
export const ENV_VARIABLES = {
  OBV_BASE_URL: 'baseUrl',
  OBV_GATEWAY_URL: 'gatewayUrl',
  OBV_CLIENT_ID: 'clientId',
  OBV_CLIENT_SECRET: 'clientSecret',
  OBV_TOKEN_SCOPE: 'tokenScope',
  OBV_TRANSACTION_SCOPE: 'transactionScope',
  OBV_PUBLIC_URL: 'publicUrl',
  OBV_MOUNT_PATH: 'mountPath',
  OBV_WEBHOOK_SECRET: 'webhookSecret',
  OBV_ALLOWED_ORIGINS: 'allowedOrigins',
  OBV_MERCHANT_ID: 'merchantId',
  OBV_MERCHANT_SUB_ID: 'merchantSubId',
  OBV_PRODUCT: 'product',
  OBV_TRANSACTION_REGION: 'transactionRegion',
  OBV_PGW_APP_ID: 'pgwAppId',
  OBV_PGW_CLIENT_ID: 'pgwClientId',
  OBV_MERCHANT_API_KEY: 'merchantApiKey',
  OBV_SESSION_TTL: 'sessionTtlMs',
  OBV_UPSTREAM_TIMEOUT: 'upstreamTimeoutMs',
  OBV_SANDBOX: 'sandbox',
  OBV_REDIS_URL: 'redisUrl',
  OBV_REDIS_PREFIX: 'redisPrefix',
  OBV_RATE_LIMIT: 'rateLimit',
  OBV_TRUST_PROXY: 'trustProxy',
  OBV_LOG_LEVEL: 'logLevel',
  PORT: 'port',
} as const satisfies Record<string, keyof ProxyConfigInput>;

const KEY_TO_ENV = new Map<string, string>(Object.entries(ENV_VARIABLES).map(([env, key]) => [key, env]));

/** Thrown for an invalid configuration; the message lists every bad setting, one per line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly issues: { setting: string; message: string }[]) {
    super(`Invalid obv-link proxy configuration:\n${issues.map((issue) => `  - ${issue.setting}: ${issue.message}`).join('\n')}`);
  }
}

function fail(error: z.ZodError, input: object, name: (key: string) => string): never {
  throw new ConfigError(
    error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '(config)');
      const missing = issue.path.length === 1 && (input as Record<string, unknown>)[key] === undefined;
      const message = missing ? 'is required' : issue.message;
      return { setting: name(key), message };
    }),
  );
}

/** Validates a config object (code use). Throws ConfigError naming each bad key. */
export function parseProxyConfig(input: ProxyConfigInput): ProxyConfig {
  const result = ProxyConfigSchema.safeParse(withSandboxDefaults(input));
  if (!result.success) fail(result.error, input, (key) => key);
  return result.data;
}

/** Reads the configuration from environment variables. Throws ConfigError naming each bad variable. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ProxyConfig {
  const input: Record<string, string> = {};
  for (const [name, key] of Object.entries(ENV_VARIABLES)) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') input[key] = value;
  }
  const result = ProxyConfigSchema.safeParse(withSandboxDefaults(input));
  if (!result.success) fail(result.error, input, (key) => KEY_TO_ENV.get(key) ?? key);
  return result.data;
}
