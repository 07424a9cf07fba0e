// The sandbox's fixed limits and timings, in one place beside its options (options.ts) and its
// environment (env.ts). What a test may change is an option there; what is here is fixed.

const MINUTE_MS = 60_000;

/** Largest JSON body of endpoints 2 and 4. */
export const JSON_BODY_LIMIT = '32kb';
/** The token request's form body (endpoint 1): a handful of short fields. */
export const TOKEN_FORM_LIMITS = { limit: '8kb', parameterLimit: 20 } as const;
/** The bank page's sign-in form: username, password, the link token. */
export const CONSUMER_FORM_LIMITS = { limit: '4kb', parameterLimit: 10 } as const;

/** How often expired tokens and verifications are dropped from memory. */
export const SWEEP_INTERVAL_MS = MINUTE_MS;
/** How long an expired verification is remembered, so its URL answers "expired" rather than "unknown". */
export const EXPIRED_VERIFICATION_MEMORY_MS = 60 * MINUTE_MS;
/** How long an expired bearer token is remembered, so a 401 can say "expired" rather than "unknown". */
export const EXPIRED_TOKEN_MEMORY_MS = 10 * MINUTE_MS;
