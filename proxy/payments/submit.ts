// Endpoint 4 for a claimed payment, and what its answer makes of the payment: freed when it certainly
// charged nothing (no token: endpoint 1 refused, failed or timed out, so endpoint 4 was never called; a
// connection never made; the provider's refusal), `unknown` when it may have (a 5xx, a time-out, a cut, a
// 409 that may be a duplicate, a status neither paid nor declined: the merchant reconciles it),
// `completed` with the provider's answer otherwise; the merchant told each way.
import type { ProxyConfig } from '../config/schema.ts';
import { TokenUnavailableError, UpstreamHttpError, UpstreamUnreachableError } from '../upstream/errors.ts';
import { connectionNeverEstablished } from '../upstream/http.ts';
import type { TransactionClient, TransactionResult } from '../upstream/transaction-client.ts';
import { finishPayment, releaseOrder, type OrderDeps, type PaymentRecord } from './orders.ts';
import { tellPayment, tellPaymentSucceeded, type PaymentTelling } from './payment-events.ts';

export interface SubmitDeps extends OrderDeps, PaymentTelling {
  config: OrderDeps['config'] &
    Pick<
      ProxyConfig,
      | 'product'
      | 'transactionRegion'
      | 'merchantId'
      | 'merchantSubId'
      | 'declinedTransactionStatuses'
      | 'paidTransactionStatuses'
    >;
}

/** What of the merchant's request is sent on as asked (pay.ts's PaymentInput, already checked). */
export interface PaymentRequest {
  merchantUserId: string;
  merchantTransactionId: string;
  product?: string | undefined;
  language?: string | undefined;
  transactionRegion?: string | undefined;
  dataPassThrough?: string | undefined;
  originatorIp?: string | undefined;
}

/** Sends a claimed payment: `payment`, as `body` asked for it, with the verified account's token. */
export type Submit = (payment: PaymentRecord, body: PaymentRequest, accountToken: string) => Promise<TransactionResult>;

/**
 * Whether a failed call certainly charged nothing, so the order may be paid again: no token to call
 * with (endpoint 1 refused, answered 5xx, timed out or was unreachable: endpoint 4 was never called), a
 * connection never made, or the provider's own refusal (4xx). A 5xx, a reset mid-request or a time-out
 * of endpoint 4 itself may have charged: the order stays claimed and the merchant reconciles with the
 * provider.
 */
function nothingCharged(error: unknown): boolean {
  if (error instanceof TokenUnavailableError) return true;
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

/** The fields of the provider's answer the proxy keeps (the answer is otherwise undocumented, D18). */
const KEPT_ANSWER_FIELDS = ['transactionId', 'transactionStatus', 'merchantTransactionId'] as const;

function knownFields(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(KEPT_ANSWER_FIELDS.filter((field) => field in body).map((field) => [field, body[field]]));
}

export function createSubmitter(deps: SubmitDeps, client: TransactionClient): Submit {
  const { config } = deps;

  /** The payment may have charged: kept `unknown` (no retry pays the order again) and the merchant told. */
  async function finishUnknown(payment: PaymentRecord, reason: string): Promise<void> {
    const unknown: PaymentRecord = { ...payment, state: 'unknown' };
    if (await finishPayment(deps, unknown)) await tellPayment(deps, 'payment.unknown', unknown, { reason });
  }

  return async (payment, body, accountToken) => {
    const {
      merchantUserId,
      merchantTransactionId,
      product,
      language,
      transactionRegion,
      dataPassThrough,
      originatorIp,
    } = body;
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
        merchant: {
          merchantId: config.merchantId,
          merchantUserId,
          merchantTransactionId,
          merchantSubId: config.merchantSubId,
        },
        accountToken,
      });
    } catch (error) {
      if (nothingCharged(error)) {
        await releaseOrder(deps, payment);
        await tellPayment(deps, 'payment.failed', payment, {
          code: 'PAYMENT_NOT_SENT',
          message:
            error instanceof TokenUnavailableError
              ? 'No access token could be had from the payment service, so the payment was not sent; nothing was charged and the order may be paid again.'
              : 'The payment service could not be reached; nothing was charged and the order may be paid again.',
        });
      } else {
        await finishUnknown(
          payment,
          'The payment service did not answer (a time-out or a server error); it may have charged. Check with the provider and record the result.',
        );
      }
      throw error;
    }
    const answered: PaymentRecord = {
      ...payment,
      providerStatus: result.status,
      providerResponse: knownFields(result.body),
      ...(typeof result.body.transactionId === 'string' ? { transactionId: result.body.transactionId } : {}),
      ...(typeof result.body.transactionStatus === 'string'
        ? { transactionStatus: result.body.transactionStatus }
        : {}),
    };
    const status = (answered.transactionStatus ?? '').toUpperCase();
    if (result.status >= 400 && !refusalMayHaveCharged(result.status)) {
      await releaseOrder(deps, payment);
      await tellPayment(deps, 'payment.failed', payment, {
        code: 'PAYMENT_REFUSED',
        message: `The payment service refused the payment (HTTP ${result.status}); nothing was charged and the order may be paid again.`,
      });
    } else if (result.status >= 400) {
      await finishUnknown(
        answered,
        `The payment service answered HTTP ${result.status}, which may mean it charged (a duplicate transaction). Check with the provider and record the result.`,
      );
    } else if (isOneOf(status, config.declinedTransactionStatuses)) {
      // Answered, and declined: nothing was charged (OBV_DECLINED_TRANSACTION_STATUSES).
      await releaseOrder(deps, payment);
      await tellPayment(deps, 'payment.failed', answered, {
        code: 'PAYMENT_DECLINED',
        message: `The payment service declined the payment (transactionStatus ${answered.transactionStatus}); nothing was charged and the order may be paid again.`,
      });
    } else if (!isOneOf(status, config.paidTransactionStatuses)) {
      await finishUnknown(
        answered,
        `The payment service answered transactionStatus ${answered.transactionStatus ?? '(none)'}, which is neither paid nor declined (OBV_PAID_TRANSACTION_STATUSES). Check with the provider and record the result.`,
      );
    } else {
      const paid: PaymentRecord = { ...answered, state: 'completed' };
      await finishPayment(deps, paid);
      await tellPaymentSucceeded(deps, paid);
    }
    return result;
  };
}
