// The merchant's Node API besides the router (`proxy.createLinkSession`, `proxy.pay`, `proxy.readLink`, …):
// each call checks its input as its route does, with the same schemas, and calls the same service the
// route calls, so the two ways in share one set of rules.
import { z } from 'zod';
import type { ProxyConfig } from './config/schema.ts';
import { IdempotencyKey, parseOrThrow, text } from './common/validation.ts';
import { createEventVerifier } from './events/verify-event.ts';
import { acknowledgeEvent, EventId, EventListQuery, listEvents, redeliverEvent } from './events/event-list.ts';
import { sendTestEvents } from './events/test-events.ts';
import { MerchantUserId } from './accounts/forget-user.ts';
import { CreateLinkSessionBody } from './link-sessions/link-sessions.ts';
import { PaymentInput } from './payments/pay.ts';
import { ReconcileBody } from './payments/reconcile.ts';
import type { ObvProxy } from './api.ts';
import type { Services } from './services.ts';
import { EVENT_TYPES } from './storage/events.ts';

/** The calls of ObvProxy that are a route's in process (their documentation is ObvProxy's). */
export type InProcessCalls = Pick<
  ObvProxy,
  | 'createLinkSession'
  | 'reconcilePayment'
  | 'pay'
  | 'readLink'
  | 'readPayment'
  | 'listEvents'
  | 'acknowledgeEvent'
  | 'redeliverEvent'
  | 'verifyEvent'
  | 'sendTestEvents'
  | 'forgetUser'
>;

export function inProcessCalls(
  services: Pick<Services, 'linkSessions' | 'payments' | 'events' | 'forgetUser'>,
  config: ProxyConfig,
  now: () => number,
): InProcessCalls {
  const { linkSessions, payments, events } = services;
  const verifyEvent = createEventVerifier(config.eventsSecrets ?? []);
  return {
    createLinkSession: async (input) =>
      linkSessions.create(parseOrThrow(CreateLinkSessionBody, input, 'The link session')),
    reconcilePayment: async (merchantTransactionId, input) =>
      payments.reconcile(merchantTransactionId, parseOrThrow(ReconcileBody, input, 'The reconciliation')),
    async pay(input, options = {}) {
      if (!payments.pay)
        throw new TypeError(
          'proxy.pay needs the endpoint 4 settings: OBV_PGW_APP_ID and OBV_PGW_CLIENT_ID (sandbox mode fills them)',
        );
      const key =
        options.idempotencyKey === undefined
          ? undefined
          : parseOrThrow(IdempotencyKey, options.idempotencyKey, 'The idempotency key', 'idempotencyKey');
      return payments.pay(parseOrThrow(PaymentInput, input, 'The payment'), key);
    },
    forgetUser: async (merchantUserId) =>
      services.forgetUser(parseOrThrow(MerchantUserId, merchantUserId, 'The merchant user id', 'merchantUserId')),
    readLink: (linkRef) =>
      payments.readLink(parseOrThrow(z.string().max(64), linkRef, 'The link reference', 'linkRef')),
    readPayment: async (merchantTransactionId) =>
      payments.read(parseOrThrow(text(128), merchantTransactionId, 'The order id', 'merchantTransactionId')),
    async listEvents(query = {}) {
      const { after, limit, delivery } = query;
      return listEvents(
        events,
        parseOrThrow(
          EventListQuery,
          {
            ...(after !== undefined ? { after } : {}),
            ...(limit !== undefined ? { limit: String(limit) } : {}),
            ...(delivery !== undefined ? { delivery } : {}),
          },
          'The query',
        ),
      );
    },
    acknowledgeEvent: async (eventId) =>
      acknowledgeEvent(events, parseOrThrow(EventId, eventId, 'The event id', 'eventId')),
    redeliverEvent: async (eventId) =>
      redeliverEvent(events, parseOrThrow(EventId, eventId, 'The event id', 'eventId')),
    verifyEvent: (body, headers) => verifyEvent(body, headers),
    async sendTestEvents(type) {
      if (!config.eventsUrl || !config.eventsSecrets?.length)
        throw new TypeError('proxy.sendTestEvents needs OBV_EVENTS_URL and OBV_EVENTS_SECRETS');
      if (type !== undefined && !EVENT_TYPES.includes(type))
        throw new TypeError(`proxy.sendTestEvents: unknown event type ${String(type)}`);
      return sendTestEvents({ eventsUrl: config.eventsUrl, eventsSecrets: config.eventsSecrets, now }, type);
    },
  };
}
