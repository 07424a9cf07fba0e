// Payments whose holder died. Every instance looks, once a second, for `pending` payments whose lease
// is over (storage/payments.ts `expireLeases`: each is turned `unknown` by exactly one look, on one
// instance) and tells the merchant with `payment.unknown`: the provider may have charged, so the order
// is never paid again by a retry; the merchant reconciles it (reconcile.ts).
import type { Logger } from 'pino';
import type { MerchantEvents } from '../events/events.ts';
import type { PaymentStore } from '../storage/payments.ts';
import { safeError } from '../common/logger.ts';
import { StoreOutageLog } from '../storage/outage-log.ts';
import { PAYMENT_LEASE_CHECK_BATCH, PAYMENT_LEASE_CHECK_INTERVAL_MS } from '../config/limits.ts';
import { tellPayment } from './payment-events.ts';

export interface PaymentLeases {
  /** Turns every payment whose lease is over `unknown` now, and tells the merchant (reads call it too). */
  expireDue(): Promise<void>;
  close(): void;
}

export interface PaymentLeaseOptions {
  payments: PaymentStore;
  events: Pick<MerchantEvents, 'emit'>;
  logger: Logger;
  now: () => number;
  intervalMs?: number;
}

export function watchPaymentLeases(options: PaymentLeaseOptions): PaymentLeases {
  const { payments, logger, now } = options;
  let running: Promise<void> | undefined;

  async function expireDue(): Promise<void> {
    for (;;) {
      const expired = await payments.expireLeases(now(), PAYMENT_LEASE_CHECK_BATCH);
      for (const payment of expired) {
        logger.warn(
          { merchantTransactionId: payment.merchantTransactionId, paymentId: payment.paymentId },
          "a payment's holder stopped before the provider's answer was recorded: its result is unknown; reconcile it with the provider",
        );
        await tellPayment(options, 'payment.unknown', payment, {
          reason:
            'The proxy stopped while the payment was at the provider; it may have been charged. Check with the provider and record the result.',
        });
      }
      if (expired.length < PAYMENT_LEASE_CHECK_BATCH) return;
    }
  }

  const tick = () => {
    running ??= expireDue()
      .catch((error: unknown) => {
        // A store outage or a full disk is told once by the outage log (storage/outage-log.ts), not once a second here.
        if (!StoreOutageLog.covers(error))
          logger.warn({ err: safeError(error) }, 'the payment lease check could not run; it is tried again');
      })
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, options.intervalMs ?? PAYMENT_LEASE_CHECK_INTERVAL_MS);
  timer.unref();
  // At boot: a restarted single instance turns what its dead process held `unknown` at once.
  tick();
  return {
    expireDue,
    close: () => clearInterval(timer),
  };
}
