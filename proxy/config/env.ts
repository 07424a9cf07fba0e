// The environment variables `npm start` reads, each the name of one setting (settings.ts).
import type { z } from 'zod';
import type { ConfigFields } from './settings.ts';

/** Environment variable → config key. docs/PROXY.md's configuration table lists the same names. */
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
  OBV_HOSTED_REDIRECT_SCHEMES: 'hostedRedirectSchemes',
  OBV_MERCHANT_NAME: 'merchantName',
  OBV_PRODUCT: 'product',
  OBV_TRANSACTION_REGION: 'transactionRegion',
  OBV_PGW_APP_ID: 'pgwAppId',
  OBV_PGW_CLIENT_ID: 'pgwClientId',
  OBV_MERCHANT_API_KEY: 'merchantApiKey',
  OBV_MERCHANT_API_KEYS: 'merchantApiKeys',
  OBV_EVENTS_URL: 'eventsUrl',
  OBV_EVENTS_SECRETS: 'eventsSecrets',
  OBV_SUCCESS_STATUSES: 'successStatuses',
  OBV_FAILURE_STATUSES: 'failureStatuses',
  OBV_PAID_TRANSACTION_STATUSES: 'paidTransactionStatuses',
  OBV_DECLINED_TRANSACTION_STATUSES: 'declinedTransactionStatuses',
  OBV_REAUTHORIZATION_CODES: 'reauthorizationCodes',
  OBV_SESSION_TTL: 'sessionTtlMs',
  OBV_SEALING_KEYS: 'sealingKeys',
  OBV_LINK_SESSION_TTL: 'linkSessionTtlMs',
  OBV_PAYMENT_RETENTION: 'paymentRetentionMs',
  OBV_UPSTREAM_TIMEOUT: 'upstreamTimeoutMs',
  OBV_SANDBOX: 'sandbox',
  OBV_BIND_BANK_STEP: 'bindBankStep',
  OBV_DATABASE_URL: 'databaseUrl',
  OBV_DATABASE_SCHEMA: 'databaseSchema',
  OBV_DATABASE_POOL_SIZE: 'databasePoolSize',
  OBV_DATABASE_STATEMENT_TIMEOUT: 'databaseStatementTimeoutMs',
  OBV_REDIS_URL: 'redisUrl',
  OBV_REDIS_PREFIX: 'redisPrefix',
  OBV_STORAGE: 'storage',
  OBV_DATA_DIR: 'dataDir',
  OBV_ALLOW_VOLATILE_STORAGE: 'allowVolatileStorage',
  OBV_RATE_LIMIT: 'rateLimit',
  OBV_TRUST_PROXY: 'trustProxy',
  OBV_AUTH_FAILURE_LIMIT: 'authFailureLimit',
  OBV_WS_MAX_PER_SESSION: 'maxSocketsPerSession',
  OBV_WS_MAX_PER_CLIENT: 'maxSocketsPerClient',
  OBV_WS_MAX_TOTAL: 'maxSockets',
  OBV_HEADERS_TIMEOUT: 'headersTimeoutMs',
  OBV_REQUEST_TIMEOUT: 'requestTimeoutMs',
  OBV_NOTIFICATION_PUBLIC_URL: 'notificationPublicUrl',
  OBV_NOTIFICATION_PORT: 'notificationPort',
  OBV_METRICS_PORT: 'metricsPort',
  OBV_METRICS_HOST: 'metricsHost',
  OBV_SHUTDOWN_TIMEOUT: 'shutdownTimeoutMs',
  OBV_DRAIN_WINDOW: 'drainWindowMs',
  OBV_LOG_LEVEL: 'logLevel',
  HOST: 'host',
  PORT: 'port',
} as const satisfies Record<string, keyof z.input<typeof ConfigFields>>;

const KEY_TO_ENV = new Map<string, string>(Object.entries(ENV_VARIABLES).map(([env, key]) => [key, env]));

/** The environment variable of a setting (`webhookSecret` → `OBV_WEBHOOK_SECRET`), or the key itself when it has none. */
export function envName(key: string): string {
  return KEY_TO_ENV.get(key) ?? key;
}
