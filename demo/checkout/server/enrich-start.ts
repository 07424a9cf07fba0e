// The merchant's side of a verification start (the proxy's `enrichStart` hook): the page only names
// its order, and the server fills in what it knows and the browser must not decide — who the shopper
// is and what the order costs.
import { ProblemError, type EnrichStart } from '../../../proxy/index.ts';
import { shoppersOrderId } from './checkout-routes.ts';
import { SHOP, decimalAmount, type OrderBook } from './orders.ts';

/**
 * Fills consumer data from the signed-in shopper and the amount from the order the page names; a start
 * for an order this shop never opened, already settled, or that is not this browser's order is refused
 * with a 422 naming the field.
 */
export function createEnrichStart(orders: OrderBook): EnrichStart {
  return (req, draft) => {
    const orderId = draft.merchant.merchantTransactionId;
    const order = orderId ? orders.get(orderId) : undefined;
    if (!order || order.state !== 'open' || orderId !== shoppersOrderId(req)) {
      throw new ProblemError(422, 'unknown-order', 'Unknown order', 'There is no open order with this id.', [
        { path: 'merchantTransactionId', message: 'is not an open order of this shop' },
      ]);
    }
    const { firstName, lastName, email } = SHOP.shopper;
    return {
      ...draft,
      consumer: { ...draft.consumer, firstName, lastName, email },
      merchant: { ...draft.merchant, merchantUserId: order.merchantUserId },
      transaction: { ...draft.transaction, amount: decimalAmount(order.totalCents), currency: SHOP.currency },
    };
  };
}
