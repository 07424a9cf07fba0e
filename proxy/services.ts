// The domain services, wired in the order they stand on each other (docs/ARCHITECTURE.md "The layers"):
// merchant events, saved accounts, link sessions, the verification session, notifications, payments.
// Each takes only the parts it uses; the routes and the in-process calls (in-process.ts) use the same ones.
import type { Logger } from 'pino';
import type { ProxyConfig } from './config/schema.ts';
import type { ProxyMetrics } from './common/metrics.ts';
import { createSavedAccounts, type SavedAccounts } from './accounts/accounts.ts';
import type { OnSavedAccountRemoved } from './accounts/choice.ts';
import { createForgetUser, type ForgetUser } from './accounts/forget-user.ts';
import type { StoreOutageLog } from './storage/outage-log.ts';
import { createMerchantEvents, type EventTimings, type MerchantEvents } from './events/events.ts';
import { createLinkSessions, type LinkSessions } from './link-sessions/link-sessions.ts';
import { createNotifications, type Notifications } from './notifications/notifications.ts';
import { sequentialOutcomeWriter } from './storage/outcome-write.ts';
import { createPayments, type Payments } from './payments/payments.ts';
import type { Sealer } from './sealing/sealer.ts';
import type { Storage } from './storage/storage.ts';
import type { Upstream } from './upstream/upstream.ts';
import type { OnOutcome } from './verifications/delivery.ts';
import { createVerifications, type Verifications } from './verifications/verifications.ts';

export interface Services {
  events: MerchantEvents;
  accounts: SavedAccounts;
  linkSessions: LinkSessions;
  verifications: Verifications;
  notifications: Notifications;
  payments: Payments;
  /** Forgets a merchant user (accounts/forget-user.ts). */
  forgetUser: ForgetUser;
  /** Stops their timers (the events' delivery worker, the payments' lease watch, the bank steps' confirmations). */
  close(): Promise<void>;
}

export interface ServicesDeps {
  config: ProxyConfig;
  storage: Storage;
  upstream: Pick<Upstream, 'verifications' | 'transactions'>;
  sealer: Sealer;
  metrics: ProxyMetrics;
  logger: Logger;
  now: () => number;
  onOutcome?: OnOutcome | undefined;
  onSavedAccountRemoved?: OnSavedAccountRemoved | undefined;
  eventTimings?: EventTimings | undefined;
  /** Where the event worker counts its store failures during an outage. */
  storeOutage?: Pick<StoreOutageLog, 'refused'> | undefined;
  bankStepGraceMs: number;
}

export function createServices(deps: ServicesDeps): Services {
  const { config, storage, sealer, metrics, logger, now } = deps;
  const store = storage.sessionStore;
  // The events' expiry check reads a session as the merchant may see it, which the verifications service
  // (built below, on the events) answers: a bank step whose confirmation is due is delivered first.
  const late: { verifications?: Verifications } = {};
  const events = createMerchantEvents({
    config,
    outbox: storage.eventOutbox,
    sealer,
    redeliveryStore: storage.redeliveryStore,
    released: (sessionId) => late.verifications!.released(sessionId),
    logger,
    metrics,
    now,
    timings: deps.eventTimings,
    outage: deps.storeOutage,
  });
  const accounts = createSavedAccounts({
    config,
    sealer,
    removals: storage.removals,
    events,
    onSavedAccountRemoved: deps.onSavedAccountRemoved,
    logger,
    now,
  });
  const linkSessions = createLinkSessions({
    config,
    linkSessions: storage.linkSessions,
    sealer,
    payments: storage.payments,
    accounts,
    logger,
    now,
  });
  const verifications = createVerifications({
    config,
    store,
    bus: storage.resultBus,
    sealer,
    upstream: deps.upstream.verifications,
    linkSessions,
    accounts,
    events,
    onOutcome: deps.onOutcome,
    metrics,
    bankStepGraceMs: deps.bankStepGraceMs,
    logger,
    now,
  });
  late.verifications = verifications;
  const notifications = createNotifications({
    config,
    store,
    outcomes: storage.outcomeWriter ?? sequentialOutcomeWriter(store, storage.eventOutbox),
    events,
    sealer,
    accounts,
    verifications,
    metrics,
    logger,
    now,
  });
  const payments = createPayments({
    config,
    payments: storage.payments,
    sessions: store,
    bankStep: verifications,
    removals: storage.removals,
    sealer,
    upstream: deps.upstream.transactions,
    events,
    logger,
    now,
  });
  const forgetUser = createForgetUser({
    sessions: store,
    linkSessions: storage.linkSessions,
    payments: storage.payments,
    outbox: storage.eventOutbox,
    removals: storage.removals,
    events,
    logger,
    now,
  });
  return {
    events,
    accounts,
    forgetUser,
    linkSessions,
    verifications,
    notifications,
    payments,
    async close() {
      payments.close();
      await events.close();
    },
  };
}
