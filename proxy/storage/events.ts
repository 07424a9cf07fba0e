// What the merchant's server receives: the envelope `{id, type, createdAt, data}` and, per type, the
// data. Strict schemas: `emit` parses every event with them, so a field that is not listed here (an
// accountToken, a session id) can never ride along. docs/CONTRACTS.md §5 is the same table in prose.
import { z } from 'zod';
import { ReconnectResultSchema, SavedAccountSchema } from './saved-accounts.ts';

/** `evt_` + 22 base64url characters (128+ bits). */
export const EVENT_ID_PATTERN = /^evt_[A-Za-z0-9_-]{22}$/;

/** What a session was started for; each field is omitted when the session did not carry it. */
const Order = {
  merchantUserId: z.string().optional(),
  merchantTransactionId: z.string().optional(),
  amount: z.string().optional(),
  currency: z.string().optional(),
  /** link.* events only: the session was started from a hosted page, whose link may have been forwarded (docs/HOSTED-LINK.md). */
  hosted: z.literal(true).optional(),
};

/** The display fields of a verified account (never its token). */
const AccountDisplay = {
  accountLabel: z.string(),
  fiName: z.string(),
  fiAccountType: z.string(),
};

/**
 * `link.succeeded` data, with `savedAccount` when the shopper saved the account (or re-authorized it): the
 * sealed string the merchant stores, with its consent record — the one place a sealed value may appear
 * in an event — `reconnect` after a link session that re-authorized a saved account (was it the same
 * account?), and `savedAccountId` when the shopper chose a saved account (no bank step).
 */
export const LinkSucceededData = z.strictObject({
  ...Order,
  linkRef: z.string(),
  ...AccountDisplay,
  savedAccount: SavedAccountSchema.optional(),
  reconnect: ReconnectResultSchema.optional(),
  savedAccountId: z.string().optional(),
});

/** What names one payment of an order (an order may be paid again after a payment that charged nothing). */
const Payment = { paymentId: z.string(), linkRef: z.string().optional() };

export const EVENT_DATA = {
  'link.succeeded': LinkSucceededData,
  'link.failed': z.strictObject({ ...Order, code: z.string(), message: z.string() }),
  'link.cancelled': z.strictObject({ ...Order }),
  'link.expired': z.strictObject({ ...Order, expiredAt: z.iso.datetime() }),
  'payment.succeeded': z.strictObject({
    ...Order,
    ...Payment,
    transactionId: z.string(),
    transactionStatus: z.string(),
  }),
  'payment.failed': z.strictObject({ ...Order, ...Payment, code: z.string(), message: z.string() }),
  /** The payment may have charged (a 5xx, a time-out, a holder that died): reconcile it (POST /transactions/{id}/reconcile). */
  'payment.unknown': z.strictObject({ ...Order, ...Payment, reason: z.string() }),
  'reauthorization.required': z.strictObject({
    merchantUserId: z.string(),
    ...AccountDisplay,
    code: z.string(),
    accountId: z.string().optional(),
    merchantTransactionId: z.string(),
  }),
  'saved_account.removed': z.strictObject({
    merchantUserId: z.string(),
    ...AccountDisplay,
    accountId: z.string(),
    /** The order at whose checkout it was removed, or where the proxy last saw it ('' when none). */
    merchantTransactionId: z.string(),
    /** `shopper`: removed in the element; `forgotten`: the merchant's server forgot the user (proxy.forgetUser). */
    reason: z.enum(['shopper', 'forgotten']),
  }),
} as const;

export type EventType = keyof typeof EVENT_DATA;
export const EVENT_TYPES = Object.keys(EVENT_DATA) as EventType[];
export type EventData<Type extends EventType> = z.input<(typeof EVENT_DATA)[Type]>;

/**
 * One merchant event as sent and listed: a union discriminated by `type`, one member per type, so a
 * handler that checks `event.type === 'link.succeeded'` reads that type's `data` (`event.data.linkRef`).
 * `MerchantEvent<'payment.unknown'>` is that one member.
 */
export type MerchantEvent<Type extends EventType = EventType> = {
  [Each in Type]: {
    id: string;
    type: Each;
    /** ISO 8601 UTC, when the proxy recorded it. */
    createdAt: string;
    data: z.output<(typeof EVENT_DATA)[Each]>;
  };
}[Type];

/** The envelope of any event type, for reading one back (a test, the list route's consumers). */
export const MerchantEventSchema = z.strictObject({
  id: z.string().regex(EVENT_ID_PATTERN),
  type: z.enum(EVENT_TYPES as [EventType, ...EventType[]]),
  createdAt: z.iso.datetime(),
  data: z.record(z.string(), z.unknown()),
});

/** Any event, its `data` checked against its type's schema, with the members of `extra` beside them. */
export function typedEventSchema(extra: z.ZodRawShape = {}) {
  return z.discriminatedUnion(
    'type',
    EVENT_TYPES.map((type) =>
      z.strictObject({
        id: z.string().regex(EVENT_ID_PATTERN).meta({
          description: 'Stable across retries and instances (also the webhook-id header): de-duplicate on it',
        }),
        type: z.literal(type),
        createdAt: z.iso.datetime(),
        data: EVENT_DATA[type],
        ...extra,
      }),
    ) as unknown as [z.ZodObject, ...z.ZodObject[]],
  );
}

/** Any event as sent (the OpenAPI document's description of an event). */
export const TypedMerchantEventSchema = typedEventSchema();

/** The event `type` with `data`, checked against its schema; throws a ZodError for a field not allowed. */
export function buildEvent<Type extends EventType>(
  id: string,
  type: Type,
  data: EventData<Type>,
  createdAtMs: number,
): MerchantEvent<Type> {
  const parsed: unknown = EVENT_DATA[type].parse(data);
  return { id, type, createdAt: new Date(createdAtMs).toISOString(), data: parsed } as MerchantEvent<Type>;
}
