// The amount rule of every route that takes an amount (docs/CONTRACTS.md §2): a link session, a sandbox
// page's start and the upstream request. The upstream API leaves the format open: the rule is our
// decision. No imports: a contract any part may include as it is (the element no longer takes amounts).

/**
 * A positive decimal string: 1–9 integer digits without a leading zero (or one `0` before decimals, as in
 * `0.50`) and at most 2 decimals. No sign, exponent or spaces; `0` and `0.00` are not amounts.
 */
export const AMOUNT_PATTERN = /^(?!0(\.0+)?$)(0|[1-9]\d{0,8})(\.\d{1,2})?$/;

/** What is wrong with an amount that does not match {@link AMOUNT_PATTERN}, after the field's name. */
export const AMOUNT_MESSAGE = 'must be like 49.99 (positive, at most 9 digits and 2 decimals)';
