// The CLI's configuration from the environment, validated at boot: a bad variable stops the process
// with a message naming it rather than a sandbox that misbehaves later.
import { z } from 'zod';
import type { StartProviderOptions } from './index.ts';

const count = z.coerce.number().int().min(0);
const positiveInt = z.coerce.number().int().positive();
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' });

export const ProviderEnv = z.object({
  PROVIDER_PORT: z.coerce.number().int().min(0).max(65_535).default(4010),
  PROVIDER_HOST: z.string().min(1).default('127.0.0.1'),
  PROVIDER_PUBLIC_URL: httpUrl.optional(),
  PROVIDER_TOKEN_TTL: positiveInt.optional(),
  PROVIDER_CONSUMER_URL_TTL: positiveInt.optional(),
  PROVIDER_WEBHOOK_SECRET: z.string().startsWith('whsec_', 'must start with whsec_').optional(),
  PROVIDER_RETURN_URL: httpUrl.optional(),
  PROVIDER_NOTIFICATION_URL: httpUrl.optional(),
  PROVIDER_NOTIFICATION_RETRY_DELAYS_MS: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'must be comma-separated milliseconds, e.g. 500,2000,10000')
    .transform((list) => list.split(',').map(Number))
    .optional(),
  PROVIDER_NOTIFICATION_TIMEOUT_MS: positiveInt.optional(),
  PROVIDER_DROP_NOTIFICATIONS: count.optional(),
  PROVIDER_NOTIFICATION_DELAY_MS: count.optional(),
  PROVIDER_DUPLICATE_NOTIFICATIONS: count.optional(),
  PROVIDER_TOKEN_FAILURES: count.optional(),
  PROVIDER_TOKEN_FAILURE_KIND: z.enum(['5xx', 'timeout']).optional(),
  PROVIDER_LOG_LEVEL: z.enum(['silent', 'error', 'warn', 'info']).default('info'),
});

/** The provider options the environment describes, and the log level. */
export interface ProviderEnvConfig {
  options: StartProviderOptions;
  logLevel: 'silent' | 'error' | 'warn' | 'info';
}

/** Thrown for an invalid environment; the message names every bad variable. */
export class ProviderEnvError extends Error {
  override name = 'ProviderEnvError';
}

/** Reads the PROVIDER_* variables; unset or empty variables take their defaults. */
export function readProviderEnv(env: NodeJS.ProcessEnv): ProviderEnvConfig {
  const present = Object.fromEntries(
    Object.entries(env).filter(([name, value]) => name.startsWith('PROVIDER_') && value !== ''),
  );
  const parsed = ProviderEnv.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ProviderEnvError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  return {
    logLevel: e.PROVIDER_LOG_LEVEL,
    options: {
      port: e.PROVIDER_PORT,
      host: e.PROVIDER_HOST,
      publicUrl: e.PROVIDER_PUBLIC_URL,
      tokenTtlSeconds: e.PROVIDER_TOKEN_TTL,
      consumerUrlTtlSeconds: e.PROVIDER_CONSUMER_URL_TTL,
      webhookSecret: e.PROVIDER_WEBHOOK_SECRET,
      defaultReturnURL: e.PROVIDER_RETURN_URL,
      defaultNotificationURL: e.PROVIDER_NOTIFICATION_URL,
      notificationRetryDelaysMs: e.PROVIDER_NOTIFICATION_RETRY_DELAYS_MS,
      notificationTimeoutMs: e.PROVIDER_NOTIFICATION_TIMEOUT_MS,
      faults: {
        dropNotifications: e.PROVIDER_DROP_NOTIFICATIONS,
        notificationDelayMs: e.PROVIDER_NOTIFICATION_DELAY_MS,
        duplicateNotifications: e.PROVIDER_DUPLICATE_NOTIFICATIONS,
        tokenFailures: { count: e.PROVIDER_TOKEN_FAILURES ?? 0, kind: e.PROVIDER_TOKEN_FAILURE_KIND ?? '5xx' },
      },
    },
  };
}

/** What each variable is for, one line each (`npx obv-link-sandbox --help`); typed by the schema's keys. */
const PURPOSE: Record<keyof typeof ProviderEnv.shape, string> = {
  PROVIDER_PORT: 'port to listen on',
  PROVIDER_HOST: 'address to listen on',
  PROVIDER_PUBLIC_URL: "the sandbox's URL in the links it makes (default: the Host of the request)",
  PROVIDER_TOKEN_TTL: 'seconds a token lives (default 3600)',
  PROVIDER_CONSUMER_URL_TTL: 'seconds a bank link lives (default 900)',
  PROVIDER_WEBHOOK_SECRET: 'whsec_ secret signing notifications (default the published one)',
  PROVIDER_RETURN_URL: 'returnURL for a request without one',
  PROVIDER_NOTIFICATION_URL: 'notificationURL for a request without one',
  PROVIDER_NOTIFICATION_RETRY_DELAYS_MS: 'comma list of retry delays of a notification',
  PROVIDER_NOTIFICATION_TIMEOUT_MS: 'time-out of one notification attempt (default 10000)',
  PROVIDER_DROP_NOTIFICATIONS: 'fault: that many notification attempts are not sent',
  PROVIDER_NOTIFICATION_DELAY_MS: 'fault: each notification waits this long first',
  PROVIDER_DUPLICATE_NOTIFICATIONS: 'fault: that many notifications are sent twice',
  PROVIDER_TOKEN_FAILURES: 'fault: the next N token requests fail',
  PROVIDER_TOKEN_FAILURE_KIND: 'fault: 5xx or timeout',
  PROVIDER_LOG_LEVEL: 'silent, error, warn or info',
};

/** The PROVIDER_* variables, one line each, with the schema's default where it has one. */
export function providerEnvHelp(): string {
  const names = Object.keys(ProviderEnv.shape) as (keyof typeof ProviderEnv.shape)[];
  const width = Math.max(...names.map((name) => name.length)) + 2;
  return names
    .map((name) => {
      const parsed = ProviderEnv.shape[name].safeParse(undefined);
      const fallback = parsed.success && parsed.data !== undefined ? ` [default ${String(parsed.data)}]` : '';
      return `  ${name.padEnd(width)}${PURPOSE[name]}${fallback}`;
    })
    .join('\n');
}
