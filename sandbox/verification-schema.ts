// The verification request of endpoint 2: the provider's top-level fields plus the inner fields we chose
// (docs/UPSTREAM.md#d7-verification-request-fields, docs/CONTRACTS.md §1). `countryCode` is only checked for shape here; "not US" is a 422,
// decided by the endpoint after the body is otherwise valid.
import { z } from 'zod';

const required = (name: string) =>
  z
    .string({ error: `${name} is required and must be a string` })
    .trim()
    .min(1, `${name} must not be empty`);

const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
  .max(2048, 'must be at most 2048 characters');

/** Consumer data: names and email are validated, any other field is passed through. */
export const ConsumerData = z.looseObject({
  firstName: required('firstName').max(100),
  lastName: required('lastName').max(100),
  email: z.email({ error: 'must be an email address' }).max(254),
});

/** Merchant data: the names of the transaction request's `merchant`, plus the per-request URLs. */
export const MerchantData = z.object({
  merchantId: required('merchantId').max(100),
  merchantUserId: required('merchantUserId').max(100),
  merchantTransactionId: required('merchantTransactionId').max(100),
  merchantSubId: z.string().max(100).optional(),
  returnURL: httpUrl.optional(),
  notificationURL: httpUrl.optional(),
});
export type MerchantData = z.infer<typeof MerchantData>;

/** Transaction details; verification starts no transaction, they are echoed in the notification. */
export const TransactionData = z.object({
  amount: z
    .string({ error: 'amount is required and must be a decimal string' })
    .regex(/^\d{1,9}(\.\d{1,2})?$/, 'must be a decimal string such as 49.99'),
  currency: z
    .string({ error: 'currency is required' })
    .regex(/^[A-Z]{3}$/, 'must be a 3-letter ISO 4217 code such as USD'),
  product: required('product').max(100),
  transactionRegion: z.string().max(100).optional(),
  language: z
    .string()
    .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a language tag such as en-US')
    .optional(),
  dataPassThrough: z.string().max(1000).optional(),
  originatorIp: z.union([z.ipv4(), z.ipv6()], { error: 'must be an IPv4 or IPv6 address' }).optional(),
});
export type TransactionData = z.infer<typeof TransactionData>;

export const VerificationRequest = z.object({
  accountToken: z.string().min(1).max(200).optional(),
  countryCode: z.string({ error: 'countryCode is required' }).length(2, 'must be a 2-character country code'),
  consumer: ConsumerData,
  merchant: MerchantData,
  transaction: TransactionData,
});
export type VerificationRequest = z.infer<typeof VerificationRequest>;
