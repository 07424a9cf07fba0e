// One table of amounts for every route that takes one (contracts/amount.ts): the node test runs it through
// the merchant's POST /link-sessions (and a start with the link token of each accepted one). When a route
// drifts from the shared rule, its test fails on the same row.

/** Amounts every route must accept. */
export const ACCEPTED_AMOUNTS = ['49.99', '5', '0.5', '0.50', '0.01', '10.1', '999999999.99', '123456789'] as const;

/** Amounts every route must refuse, with a 400 naming `amount`. */
export const REFUSED_AMOUNTS = [
  '0',
  '0.00',
  '0.0',
  '1000000000',
  '1.234',
  '01',
  '00.5',
  '-1',
  '+1',
  '1e3',
  '1.',
  '.5',
  ' 1',
  '1,00',
  '',
] as const;
