// Paying with a link reference, as one service: the verified account behind a reference (linked-account.ts:
// GET /links, `proxy.readLink`), paying an order once (pay.ts, with the order's claim and replays in
// orders.ts), an order's payment read back, a payment whose result is unknown reconciled (reconcile.ts),
// and the watch that turns a dead holder's payment `unknown` (leases.ts).
import type { Logger } from 'pino';
import type { MerchantEvents } from '../events/events.ts';
import type { Sealer } from '../sealing/sealer.ts';
import type { PaymentStore } from '../storage/payments.ts';
import type { RemovalStore } from '../storage/removals.ts';
import type { SessionStore } from '../storage/sessions.ts';
import type { TransactionClient } from '../upstream/transaction-client.ts';
import type { Verifications } from '../verifications/verifications.ts';
import { watchPaymentLeases } from './leases.ts';
import { readLinkedAccount, type LinkedAccount } from './linked-account.ts';
import { orderPayments, type OrderPayments } from './orders.ts';
import { createPayer, type Payer, type PayerDeps } from './pay.ts';
import { reconcilePayment, type ReconcileBody, type Reconciled } from './reconcile.ts';

export interface PaymentsDeps {
  config: PayerDeps['config'];
  payments: PaymentStore;
  /** Where link references lead (their marker and session). */
  sessions: Pick<SessionStore, 'get' | 'readMark'>;
  /** A reference pays only once its bank step is confirmed (verifications/bank-step.ts). */
  bankStep: Pick<Verifications, 'bankStepConfirmed'>;
  removals: Pick<RemovalStore, 'isRemoved'>;
  sealer: Sealer;
  /** Endpoint 4; undefined without OBV_PGW_APP_ID and OBV_PGW_CLIENT_ID (paying is then off). */
  upstream: TransactionClient | undefined;
  events: Pick<MerchantEvents, 'emit'>;
  logger: Logger;
  now: () => number;
}

export interface Payments {
  /** Pays an order (POST /transactions, `proxy.pay`); undefined while paying is off. */
  pay: Payer | undefined;
  /** An order's payment (GET /transactions/{id}) and its earlier ones, or undefined when none is on record. */
  read(merchantTransactionId: string): Promise<OrderPayments | undefined>;
  /** Records what the provider says of a payment whose result is unknown. */
  reconcile(merchantTransactionId: string, body: ReconcileBody): Promise<Reconciled>;
  /** The verified account behind a link reference, token included; 404/403 otherwise. */
  readLink(linkRef: string): Promise<LinkedAccount>;
  /** Payments under way now (POST /transactions and `proxy.pay`, from the claim to their answer). */
  readonly inFlight: number;
  /**
   * Resolves once every payment under way has its answer, or after `boundMs`, with how many are left: a
   * shutdown waits for them, since a payment cut at the provider is `unknown` until the merchant reconciles it.
   */
  settled(boundMs: number): Promise<number>;
  /** Stops the lease watch. */
  close(): void;
}

export function createPayments(deps: PaymentsDeps): Payments {
  const leases = watchPaymentLeases(deps);
  const orders = { ...deps, leases };
  const payer = deps.upstream && createPayer(orders, deps.upstream);
  const underWay = new Set<Promise<unknown>>();
  return {
    // One payer for POST /transactions and `proxy.pay()`: the same rules either way, each one counted
    // while under way so a shutdown can wait for it.
    pay:
      payer &&
      (async (input, idempotencyKey) => {
        const paying = payer(input, idempotencyKey);
        underWay.add(paying);
        try {
          return await paying;
        } finally {
          underWay.delete(paying);
        }
      }),
    get inFlight() {
      return underWay.size;
    },
    async settled(boundMs) {
      if (underWay.size === 0) return 0;
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)));
      await Promise.race([Promise.allSettled([...underWay]), bound]);
      clearTimeout(timer);
      return underWay.size;
    },
    read: (merchantTransactionId) => orderPayments(orders, merchantTransactionId),
    reconcile: (merchantTransactionId, body) => reconcilePayment(orders, merchantTransactionId, body),
    readLink: (linkRef) => readLinkedAccount(orders, linkRef),
    close: () => leases.close(),
  };
}
