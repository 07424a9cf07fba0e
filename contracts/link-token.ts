// The shape of a link token, the one rule the element and the proxy share about it: the proxy makes
// tokens of this shape (POST /link-sessions) and refuses any other, and the element shows a configuration
// error for a `link-token` attribute that is not one, before it calls anything. No imports: the browser
// bundle and the compiled proxy both include this file as it is.

/** `lt_` and 32 base64url characters: 192 random bits. */
export const LINK_TOKEN_PATTERN = /^lt_[A-Za-z0-9_-]{32}$/;
