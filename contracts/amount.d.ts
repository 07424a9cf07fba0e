/**
 * A positive decimal string: 1–9 integer digits without a leading zero (or one `0` before decimals, as in
 * `0.50`) and at most 2 decimals. No sign, exponent or spaces; `0` and `0.00` are not amounts.
 */
export declare const AMOUNT_PATTERN: RegExp;
/** What is wrong with an amount that does not match {@link AMOUNT_PATTERN}, after the field's name. */
export declare const AMOUNT_MESSAGE = "must be a positive decimal string such as \"49.99\" (at most 9 digits before the point, 2 after)";
/** Whether `value` is an amount the element may send and the proxy accepts. */
export declare function isAmount(value: string): boolean;
