// The merchant events about one payment, each named by the payment (its id is derived from the payment's
// id, never the order's): a retry or another instance that tells the same thing records nothing new, and
// two payments of one order (the first charged nothing) never share an event id.
import type { Logger } from 'pino';
import type { EventData } from '../storage/events.ts';
import type { MerchantEvents } from '../events/events.ts';
import { safeError } from '../common/logger.ts';
import type { PaymentRecord } from '../storage/payments.ts';

export type PaymentEventType = 'payment.succeeded' | 'payment.failed' | 'payment.unknown';

/** The order and payment fields every payment event carries. */
export function paymentFields(
  payment: Pick<
    PaymentRecord,
    'paymentId' | 'merchantTransactionId' | 'merchantUserId' | 'amount' | 'currency' | 'linkRef'
  >,
) {
  const { paymentId, merchantTransactionId, merchantUserId, amount, currency, linkRef } = payment;
  return { paymentId, merchantTransactionId, amount, currency, linkRef, ...(merchantUserId ? { merchantUserId } : {}) };
}

/** Where payment events go, and where a failure to record one is logged. */
export interface PaymentTelling {
  events: Pick<MerchantEvents, 'emit'>;
  logger: Logger;
}

/**
 * Records a payment event. The payment stands whatever happens here: an outbox that cannot be written
 * is logged (GET /transactions/{id} still answers the payment), and `payment.succeeded` is recorded again
 * by a retry of the same request, which replays the payment.
 */

export async function tellPayment<Type extends PaymentEventType>(
  deps: PaymentTelling,
  type: Type,
  payment: PaymentRecord,
  data: Omit<EventData<Type>, keyof ReturnType<typeof paymentFields>>,
): Promise<void> {
  try {
    await deps.events.emit(type, { ...paymentFields(payment), ...data } as EventData<Type>, {
      once: `${type}:${payment.paymentId}`,
    });
  } catch (error) {
    deps.logger.error(
      { err: safeError(error), merchantTransactionId: payment.merchantTransactionId, type },
      'the merchant event could not be recorded',
    );
  }
}

/**
 * Records `payment.succeeded`, or throws: the payment stands, but its answer waits until its event is
 * durable too. A database that fails between the payment's commit and the event's (a crash, a failover)
 * then answers 503, and the merchant's retry with the same Idempotency-Key replays the payment and records
 * the event (its id is the payment's, so once). Answering 201 without it would lose the event for good.
 */
export async function tellPaymentSucceeded(deps: PaymentTelling, payment: PaymentRecord): Promise<void> {
  try {
    await deps.events.emit(
      'payment.succeeded',
      {
        ...paymentFields(payment),
        transactionId: payment.transactionId ?? '',
        transactionStatus: payment.transactionStatus ?? '',
      },
      { once: `payment.succeeded:${payment.paymentId}` },
    );
  } catch (error) {
    deps.logger.error(
      { err: safeError(error), merchantTransactionId: payment.merchantTransactionId, type: 'payment.succeeded' },
      'the merchant event could not be recorded; the payment stands and is answered when retried',
    );
    throw error;
  }
}

/** Records `reauthorization.required` (the account must be reconnected); logged when the outbox cannot be written. */
export async function tellReauthorization(
  deps: PaymentTelling,
  data: EventData<'reauthorization.required'>,
): Promise<void> {
  try {
    await deps.events.emit('reauthorization.required', data);
  } catch (error) {
    deps.logger.error(
      { err: safeError(error), merchantTransactionId: data.merchantTransactionId, type: 'reauthorization.required' },
      'the merchant event could not be recorded',
    );
  }
}
