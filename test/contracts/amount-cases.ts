// One table of amounts for the element and the proxy (contracts/amount.ts): the browser test runs it
// through the element's `amount` attribute, the node test through the proxy's POST /verifications. When
// either side drifts from the shared rule, its test fails on the same row.

/** Amounts both sides must accept. */
export const ACCEPTED_AMOUNTS = ['49.99', '5', '0.5', '0.50', '0.01', '10.1', '999999999.99', '123456789'] as const;

/** Amounts both sides must refuse (the proxy with a 400 naming `amount`). */
export const REFUSED_AMOUNTS = ['0', '0.00', '0.0', '1000000000', '1.234', '01', '00.5', '-1', '+1', '1e3', '1.', '.5', ' 1', '1,00', ''] as const;
