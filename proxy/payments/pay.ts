// Paying an order with a link reference (endpoint 4), for POST /transactions and `proxy.pay()` alike: the
// reference pays only for the user, order, amount and currency it was verified for; the order is paid once
// (orders.ts), whatever reference is offered; the amount and currency sent upstream are the verified ones.
// A call that certainly charged nothing frees the order; one that may have charged leaves it `unknown`.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config/schema.ts';
import type { MerchantEvents } from '../events/events.ts';
import type { RemovalStore } from '../storage/removals.ts';
import { problem, type ProblemError } from '../common/errors.ts';
import { ID_PATTERN, sessionLogRef } from '../common/ids.ts';
import { TokenError, UpstreamHttpError, UpstreamUnreachableError } from '../upstream/errors.ts';
import { connectionNeverEstablished } from '../upstream/http.ts';
import type { TransactionClient, TransactionResult } from '../upstream/transaction-client.ts';
import { resolveLinkRef, type LinkRefDeps } from './linked-account.ts';
import { Amount, CurrencyCode, text } from '../common/validation.ts';
import { claimOrder, earlierPayment, finishPayment, readPayment, releaseOrder, type OrderDeps, type PaymentRecord, type Replay } from './orders.ts';
import { tellPayment } from './payment-events.ts';
import type { SessionRecord } from '../storage/sessions.ts';
import { reauthorizationCode, reauthorizationRequired, staleAccountId } from '../accounts/reauthorization.ts';
import type { EventData } from '../storage/events.ts';
import { safeError } from '../common/logger.ts';

/** CONTRACTS §3. Strict: a field the proxy does not know is refused, never passed to the provider. */
export const PaymentInput = z.strictObject({
  linkRef: z.string().regex(ID_PATTERN, 'must be the link reference the element gave the page'),
  merchantUserId: text(128),
  merchantTransactionId: text(128),
  /** What the merchant's server expects to charge: must equal the verified amount and currency. */
  amount: Amount,
  currency: CurrencyCode,
  product: text(64).optional(),
  language: text(35).optional(),
  transactionRegion: text(64).optional(),
  dataPassThrough: z.string().max(1024).optional(),
  originatorIp: z.union([z.ipv4(), z.ipv6()]).optional(),
});
export type PaymentInput = z.infer<typeof PaymentInput>;

/** What paying answers: the provider's answer (status and known body), or the first one again for a retry. */
export interface PaymentAnswer {
  status: number;
  body: Record<string, unknown>;
  /** True when this is the first payment's answer again (the same Idempotency-Key and body). */
  replayed: boolean;
}

/** 422: the reference was verified for someone or something else. */
function mismatch(path: string, detail: string): ProblemError {
  return problem('link-ref-mismatch', detail, { errors: [{ path, message: 'does not match the verification' }] });
}

const sameAmount = (a: string, b: string) => Number(a) === Number(b);

/** The payment must be exactly what the account was verified for. */
function requireVerifiedPurchase(record: SessionRecord, body: PaymentInput): void {
  if (record.merchantUserId !== body.merchantUserId) throw mismatch('merchantUserId', 'This account was verified for another merchant user.');
  if (record.merchantTransactionId !== body.merchantTransactionId) throw mismatch('merchantTransactionId', 'This account was verified for another order.');
  if (record.amount === undefined || !sameAmount(body.amount, record.amount)) {
    throw mismatch('amount', `This account was verified for an amount of ${record.amount ?? '(none)'}.`);
  }
  if (body.currency !== (record.currency ?? 'USD')) throw mismatch('currency', `This account was verified for ${record.currency ?? 'USD'}.`);
}

/**
 * Whether a failed call certainly charged nothing, so the order may be paid again: no token to call
 * with, a connection never made, or the provider's own refusal (4xx). A 5xx, a reset mid-request or a
 * time-out may have charged: the order stays claimed and the merchant reconciles with the provider.
 */
function nothingCharged(error: unknown): boolean {
  if (error instanceof TokenError) return true;
  if (error instanceof UpstreamUnreachableError) return connectionNeverEstablished(error.cause);
  return error instanceof UpstreamHttpError && error.status < 500 && !refusalMayHaveCharged(error.status);
}

/** Whether `status` (upper case) is one of `words`, which the configuration compares case-insensitively. */
const isOneOf = (status: string, words: readonly string[]) => words.some((word) => word.toUpperCase() === status);

/**
 * Whether the provider's refusal may still have charged: a 409 can be a gateway's "duplicate
 * transaction" (an earlier attempt went through). Every other 4xx is a refusal that charged nothing.
 */
function refusalMayHaveCharged(status: number): boolean {
  return status === 409;
}

/** A digest of the request, so a retry with the same Idempotency-Key is recognised as the same request. */
function requestDigest(body: PaymentInput): string {
  const sorted = Object.fromEntries(Object.entries(body).sort(([a], [b]) => a.localeCompare(b)));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('base64url');
}

/** The fields of the provider's answer the proxy keeps (the answer is otherwise undocumented, D18). */
const KEPT_ANSWER_FIELDS = ['transactionId', 'transactionStatus', 'merchantTransactionId'] as const;

function knownFields(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(KEPT_ANSWER_FIELDS.filter((field) => field in body).map((field) => [field, body[field]]));
}

/** The first answer again, for a retry with the same Idempotency-Key and body. */
function replayAnswer({ replay: payment }: Replay): PaymentAnswer {
  return { status: payment.providerStatus ?? 201, body: payment.providerResponse ?? {}, replayed: true };
}

export type Payer = (input: PaymentInput, idempotencyKey?: string) => Promise<PaymentAnswer>;

/**
 * Pays orders through `client` (endpoint 4). Throws a ProblemError for every refusal the route answers
 * as a problem (404 unknown reference, 409 paid or in progress, 422 mismatch or reused key, …) and the
 * upstream errors (502, 504) as they are.
 */
/** What paying needs: the order's rules (orders.ts), where link references lead, removals, events, the settings it sends. */
export interface PayerDeps extends OrderDeps, LinkRefDeps {
  config: OrderDeps['config'] & Pick<ProxyConfig, 'product' | 'transactionRegion' | 'merchantId' | 'merchantSubId'
    | 'declinedTransactionStatuses' | 'paidTransactionStatuses' | 'reauthorizationCodes'>;
  removals: Pick<RemovalStore, 'isRemoved'>;
  events: Pick<MerchantEvents, 'emit'>;
  logger: Logger;
}

export function createPayer(deps: PayerDeps, client: TransactionClient): Payer {
  const { config, logger } = deps;

  /**
   * Endpoint 4 for the claimed payment. Freed when it certainly charged nothing, `unknown` when it may
   * have (the merchant reconciles it), `completed` with the provider's answer otherwise.
   */
  async function submit(payment: PaymentRecord, body: PaymentInput, accountToken: string): Promise<TransactionResult> {
    const { merchantUserId, merchantTransactionId, product, language, transactionRegion, dataPassThrough, originatorIp } = body;
    let result: TransactionResult;
    try {
      result = await client.submit({
        product: product ?? config.product,
        countryCode: 'US',
        transactionRegion: transactionRegion ?? config.transactionRegion,
        language,
        dataPassThrough,
        // The caller is the merchant's server, so its address is not the consumer's: only what it sends.
        originatorIp,
        // Always what the account was verified for, never a figure from the request.
        amount: payment.amount,
        currency: payment.currency,
        merchant: { merchantId: config.merchantId, merchantUserId, merchantTransactionId, merchantSubId: config.merchantSubId },
        accountToken,
      });
    } catch (error) {
      if (nothingCharged(error)) {
        await releaseOrder(deps, payment);
        await tellPayment(deps, 'payment.failed', payment, { code: 'PAYMENT_NOT_SENT',
          message: 'The payment service could not be reached; nothing was charged and the order may be paid again.' });
      } else {
        await finishUnknown(payment, 'The payment service did not answer (a time-out or a server error); it may have charged. Check with the provider and record the result.');
      }
      throw error;
    }
    const answered: PaymentRecord = {
      ...payment,
      providerStatus: result.status,
      providerResponse: knownFields(result.body),
      ...(typeof result.body.transactionId === 'string' ? { transactionId: result.body.transactionId } : {}),
      ...(typeof result.body.transactionStatus === 'string' ? { transactionStatus: result.body.transactionStatus } : {}),
    };
    const status = (answered.transactionStatus ?? '').toUpperCase();
    if (result.status >= 400 && !refusalMayHaveCharged(result.status)) {
      await releaseOrder(deps, payment);
      await tellPayment(deps, 'payment.failed', payment, { code: 'PAYMENT_REFUSED',
        message: `The payment service refused the payment (HTTP ${result.status}); nothing was charged and the order may be paid again.` });
    } else if (result.status >= 400) {
      await finishUnknown(answered, `The payment service answered HTTP ${result.status}, which may mean it charged (a duplicate transaction). Check with the provider and record the result.`);
    } else if (isOneOf(status, config.declinedTransactionStatuses)) {
      // Answered, and declined: nothing was charged (OBV_DECLINED_TRANSACTION_STATUSES).
      await releaseOrder(deps, payment);
      await tellPayment(deps, 'payment.failed', answered, { code: 'PAYMENT_DECLINED',
        message: `The payment service declined the payment (transactionStatus ${answered.transactionStatus}); nothing was charged and the order may be paid again.` });
    } else if (!isOneOf(status, config.paidTransactionStatuses)) {
      await finishUnknown(answered, `The payment service answered transactionStatus ${answered.transactionStatus ?? '(none)'}, which is neither paid nor declined (OBV_PAID_TRANSACTION_STATUSES). Check with the provider and record the result.`);
    } else {
      const paid: PaymentRecord = { ...answered, state: 'completed' };
      await finishPayment(deps, paid);
      await tellPayment(deps, 'payment.succeeded', paid, { transactionId: paid.transactionId ?? '', transactionStatus: paid.transactionStatus ?? '' });
    }
    return result;
  }

  /** The payment may have charged: kept `unknown` (no retry pays the order again) and the merchant told. */
  async function finishUnknown(payment: PaymentRecord, reason: string): Promise<void> {
    const unknown: PaymentRecord = { ...payment, state: 'unknown' };
    if (await finishPayment(deps, unknown)) await tellPayment(deps, 'payment.unknown', unknown, { reason });
  }

  async function tellReauthorization(data: EventData<'reauthorization.required'>): Promise<void> {
    try {
      await deps.events.emit('reauthorization.required', data);
    } catch (error) {
      logger.error({ err: safeError(error), merchantTransactionId: data.merchantTransactionId, type: 'reauthorization.required' }, 'the merchant event could not be recorded');
    }
  }

  const tellReplayed = (payment: PaymentRecord) =>
    tellPayment(deps, 'payment.succeeded', payment, { transactionId: payment.transactionId ?? '', transactionStatus: payment.transactionStatus ?? '' });

  return async function pay(input: PaymentInput, idempotencyKey?: string): Promise<PaymentAnswer> {
    const retry = { idempotencyKey, requestDigest: requestDigest(input) };
    // An order paid before answers with that payment, whatever link reference is offered now.
    const earlier = await readPayment(deps, input.merchantTransactionId);
    if (earlier !== undefined) {
      const replayed = earlierPayment(deps, earlier, retry);
      await tellReplayed(replayed.replay);
      return replayAnswer(replayed);
    }
    const { record, outcome } = await resolveLinkRef(deps, input.linkRef);
    requireVerifiedPurchase(record, input);
    // A reference made from a saved account the shopper removed since pays nothing (storage/removals.ts).
    if (record.savedAccountId !== undefined && record.merchantUserId !== undefined && await deps.removals.isRemoved(record.merchantUserId, record.savedAccountId)) {
      throw problem('saved-account-removed', 'The shopper removed the saved account this link reference was made from; nothing was charged.',
        { errors: [{ path: 'linkRef', message: 'was made from a saved account the shopper removed' }] });
    }
    const claimed = await claimOrder(deps, {
      merchantTransactionId: input.merchantTransactionId,
      merchantUserId: input.merchantUserId,
      amount: record.amount!,
      currency: record.currency ?? 'USD',
      accountLabel: outcome.accountLabel,
      fiName: outcome.fiName,
      fiAccountType: outcome.fiAccountType,
      linkRef: input.linkRef,
      requestDigest: retry.requestDigest,
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    }, retry);
    if ('replay' in claimed) {
      await tellReplayed(claimed.replay);
      return replayAnswer(claimed);
    }
    const result = await submit(claimed, input, outcome.accountToken);
    // A stale account (nothing was charged, the order is free again): the shopper must reconnect it.
    const stale = result.status >= 400 ? reauthorizationCode(result.body, config.reauthorizationCodes) : undefined;
    if (stale) {
      logger.info({ merchantTransactionId: input.merchantTransactionId, providerCode: stale }, 'transaction refused: the account needs re-authorization');
      const problem = reauthorizationRequired(record, outcome, stale);
      const accountId = staleAccountId(record, outcome);
      const { accountLabel, fiName, fiAccountType } = outcome;
      await tellReauthorization({ merchantUserId: input.merchantUserId, accountLabel, fiName, fiAccountType, code: stale, merchantTransactionId: input.merchantTransactionId, ...(accountId ? { accountId } : {}) });
      throw problem;
    }
    logger.info({ merchantTransactionId: input.merchantTransactionId, linkRef: sessionLogRef(input.linkRef), status: result.status }, 'interactive transaction submitted');
    return { status: result.status, body: result.body, replayed: false };
  };
}
