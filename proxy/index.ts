// Public API of the proxy, and nothing else: `createObvProxy(options)` (obv-proxy.ts, the composition root)
// builds the Express sub-app, the services and the storage; `proxy.attachRelay(server)` adds the
// WebSocket relay to the merchant's server. Everything a merchant's code may name is exported here.
export { createObvProxy } from './obv-proxy.ts';
export type { ObvProxy, ObvProxyDependencies, ObvProxyOptions } from './api.ts';

// The configuration.
export type { ProxyConfig, ProxyConfigInput } from './config/schema.ts';
export { ConfigError, configFromEnv, parseProxyConfig } from './config/schema.ts';
export { ENV_VARIABLES } from './config/env.ts';
export type { MerchantApiKey } from './config/merchant-api-keys.ts';
export { serverOptions } from './http/server-options.ts';

// The merchant's hooks and what they receive.
export type { EnrichStart } from './routes/verifications.ts';
export type { VerificationDraft } from './verifications/start.ts';
export type { OnOutcome, OutcomeReport } from './verifications/delivery.ts';
export type { OnSavedAccountRemoved, SavedAccountRemoval } from './accounts/choice.ts';
export type { ForgottenUser } from './accounts/forget-user.ts';

// What the in-process calls take and answer.
export type { CreateLinkSessionBody as LinkSessionInput, CreatedLinkSession } from './link-sessions/link-sessions.ts';
export type { LinkedAccount } from './payments/linked-account.ts';
export type { PaymentInput, PaymentAnswer } from './payments/pay.ts';
export type { OrderPayments, PaymentView } from './payments/orders.ts';
export type { ReconcileBody, Reconciled } from './payments/reconcile.ts';
export type { SavedAccount, ReconnectResult, ConsentRecord } from './storage/saved-accounts.ts';
export type { ConsentWords } from './words/consent.ts';
export type { Relay } from './relay/relay.ts';

// Merchant events.
export type { MerchantEvent, EventType, EventData } from './storage/events.ts';
export { EVENT_TYPES, MerchantEventSchema } from './storage/events.ts';
export type { MerchantEvents, EmitOptions, EventTimings } from './events/events.ts';
export type { ListedEvent, ListedDelivery } from './events/event-list.ts';
export type { DeliveryHeaders } from './events/verify-event.ts';
export type { TestEventResult } from './events/test-events.ts';
export { WebhookSignatureError } from './common/webhook-signature.ts';

// Storage: one value holding every record (`backend`), and its parts for a backend of your own.
export { createStorage, type StorageOptions } from './storage/create-storage.ts';
export { createOutboxCodec } from './sealing/outbox-codec.ts';
export type { OutboxCodec } from './storage/outbox.ts';
export type { Storage, StorageKind } from './storage/storage.ts';
export { openRedisStorage, type RedisStorage, type RedisStorageOptions } from './storage/redis/storage.ts';
export {
  openPostgresStorage,
  type PostgresStorage,
  type PostgresStorageBuildOptions as PostgresStorageOptions,
} from './storage/postgres/storage.ts';
export { DatabaseSchemaError } from './storage/postgres/options.ts';
export { DataDirectoryError } from './storage/sqlite/database.ts';
export { SqliteUnavailableError } from './storage/sqlite/driver.ts';
export { backupDatabase, BackupError, type BackupOptions, type BackupResult } from './storage/sqlite/backup.ts';
export type * from './storage/sessions.ts';
export type * from './storage/result-bus.ts';
export type { PaymentRecord, PaymentState } from './storage/payments.ts';
export type { EventOutbox } from './storage/outbox.ts';
export { MemorySessionStore } from './storage/memory/session-store.ts';
export { MemoryResultBus } from './storage/memory/bus.ts';
export { MemoryEventOutbox } from './storage/memory/outbox.ts';
export { SessionBackendUnavailableError, StorageFullError } from './storage/errors.ts';

// Logs, metrics, errors.
export { createLogger } from './common/logger.ts';
export type { ProxyMetrics } from './common/metrics.ts';
export { ProblemError } from './common/errors.ts';
export * from './upstream/errors.ts';
export type { CredentialCheck, CredentialStatus } from './upstream/credential-check.ts';
