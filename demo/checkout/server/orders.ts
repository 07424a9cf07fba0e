// The demo shop's orders: a fixed two-item basket priced in integer cents (never floats for money),
// kept in memory and bounded so a page left reloading cannot grow the process without limit.
import { randomBytes } from 'node:crypto';

export interface LineItem {
  sku: string;
  name: string;
  variant: string;
  /** Path of the product thumbnail under the page's assets. */
  image: string;
  quantity: number;
  unitPriceCents: number;
}

export interface Payment {
  transactionId: string;
  transactionStatus: string;
  /** Display label of the linked account, from the verified outcome the proxy holds. */
  accountLabel?: string;
  fiName?: string;
  fiAccountType?: string;
  paidAt: number;
}

export interface PaymentFailure {
  title: string;
  detail: string;
}

export interface Order {
  /** Also the `merchantTransactionId` sent upstream. */
  orderId: string;
  merchantUserId: string;
  items: readonly LineItem[];
  subtotalCents: number;
  taxCents: number;
  totalCents: number;
  state: 'open' | 'paying' | 'paid' | 'declined';
  /** The checkout's language: `es` for a Spanish checkout (`/?lang=es`), else English. */
  language: 'en' | 'es';
  /** Set when the bank asked the shopper to reconnect this saved account (`reauthorization-required`). */
  reconnect?: string;
  /**
   * The order's link session, reused while it is valid: a reload of the checkout then carries the same
   * token, so the element resumes a bank step under way.
   */
  linkSession?: { linkToken: string; expiresAt: number; language: 'en' | 'es' };
  payment?: Payment;
  failure?: PaymentFailure;
  createdAt: number;
}

export const SHOP = {
  name: 'Northwind Roasters',
  currency: 'USD',
  /** 8.875 % (New York City's combined sales tax) in parts per million, so tax stays integer arithmetic. */
  taxRatePerMillion: 88_750,
  shopper: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', merchantUserId: 'shopper-1815' },
} as const;

const BASKET: readonly LineItem[] = [
  {
    sku: 'NR-ETH-340',
    name: 'Ethiopia Yirgacheffe',
    variant: 'Whole bean · 340 g',
    image: '/assets/images/coffee-bag.svg',
    quantity: 2,
    unitPriceCents: 1850,
  },
  {
    sku: 'NR-DRIP-02',
    name: 'Ceramic Pour-Over Dripper',
    variant: 'Size 02 · Matte white',
    image: '/assets/images/dripper.svg',
    quantity: 1,
    unitPriceCents: 3200,
  },
];

/** Formats cents as the shop's currency, e.g. `$74.69`. */
export function formatMoney(cents: number): string {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency: SHOP.currency }).format(cents / 100);
}

/** Formats cents as the decimal string the verification request carries, e.g. `74.69`. */
export function decimalAmount(cents: number): string {
  return (cents / 100).toFixed(2);
}

export interface OrderBookOptions {
  /** Oldest orders are forgotten beyond this many. */
  maxOrders?: number;
}

/** In-memory order store of the demo merchant. */
export class OrderBook {
  readonly #orders = new Map<string, Order>();
  readonly #maxOrders: number;

  constructor(options: OrderBookOptions = {}) {
    this.#maxOrders = options.maxOrders ?? 1000;
  }

  /** Opens a new order for the standard basket, for the shopper `merchantUserId` (their cookie). */
  open(merchantUserId: string = SHOP.shopper.merchantUserId, language: Order['language'] = 'en'): Order {
    const subtotalCents = BASKET.reduce((sum, item) => sum + item.quantity * item.unitPriceCents, 0);
    const taxCents = Math.round((subtotalCents * SHOP.taxRatePerMillion) / 1_000_000);
    const order: Order = {
      orderId: `NR-${randomBytes(6).toString('hex').toUpperCase()}`,
      merchantUserId,
      language,
      items: BASKET,
      subtotalCents,
      taxCents,
      totalCents: subtotalCents + taxCents,
      state: 'open',
      createdAt: Date.now(),
    };
    this.#orders.set(order.orderId, order);
    // Maps iterate in insertion order, so the first key is the oldest order.
    while (this.#orders.size > this.#maxOrders) {
      const oldest = this.#orders.keys().next().value;
      if (oldest === undefined) break;
      this.#orders.delete(oldest);
    }
    return order;
  }

  get(orderId: string): Order | undefined {
    return this.#orders.get(orderId);
  }
}
