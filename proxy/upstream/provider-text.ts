// What the provider writes (field errors, failure messages) is the provider's text, not the proxy's: it
// may echo the values it was sent — an accountToken in a re-verification — so it never goes to a browser.
// The browser gets the proxy's own words; the provider's text goes to the log, scrubbed and clipped.
import type { FieldError } from '../errors.ts';

/** Longest provider text a log line carries. */
const LOGGED_PROVIDER_TEXT_MAX = 200;
/** Most provider field errors a log line carries. */
const LOGGED_FIELD_ERRORS_MAX = 20;
const REDACTED = '[redacted]';
/**
 * Anything shaped like a credential: a run of 16+ token characters holding both a letter and a digit
 * (an accountToken, a bearer, a key). Words, field names and amounts do not match.
 */
const TOKEN_LIKE = /(?=[A-Za-z0-9_\-.~+/=]*\d)(?=[A-Za-z0-9_\-.~+/=]*[A-Za-z])[A-Za-z0-9_\-.~+/=]{16,}/g;

/** Provider text fit for a log line: `known` secrets and anything token-shaped removed, then clipped. */
export function scrubProviderText(text: string, known: readonly (string | undefined)[] = []): string {
  let scrubbed = text;
  for (const secret of known) if (secret) scrubbed = scrubbed.split(secret).join(REDACTED);
  scrubbed = scrubbed.replace(TOKEN_LIKE, REDACTED);
  return scrubbed.length > LOGGED_PROVIDER_TEXT_MAX ? `${scrubbed.slice(0, LOGGED_PROVIDER_TEXT_MAX)}…` : scrubbed;
}

/** The provider's `{path, message}` list in an RFC 9457-style body, if it sent one (unscrubbed). */
export function providerFieldErrors(body: unknown): FieldError[] {
  if (typeof body !== 'object' || body === null) return [];
  const errors = (body as { errors?: unknown }).errors;
  if (!Array.isArray(errors)) return [];
  return errors
    .filter((e): e is { path: unknown; message: unknown } => typeof e === 'object' && e !== null)
    .slice(0, LOGGED_FIELD_ERRORS_MAX)
    .map((e) => ({ path: String(e.path ?? ''), message: String(e.message ?? '') }));
}

/** The provider's field errors for the log: every path and message scrubbed. */
export function loggedFieldErrors(body: unknown): FieldError[] {
  return providerFieldErrors(body).map(({ path, message }) => ({ path: scrubProviderText(path), message: scrubProviderText(message) }));
}

/** `body` with every string holding one of `secrets` rewritten without it (a deep copy of what changed). */
export function withoutSecrets(body: unknown, secrets: readonly (string | undefined)[]): unknown {
  const present = secrets.filter((secret): secret is string => !!secret);
  if (present.length === 0) return body;
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return present.reduce((text, secret) => text.split(secret).join(REDACTED), value);
    if (depth > 8 || typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [walk(key, depth + 1) as string, walk(item, depth + 1)]));
  };
  return walk(body, 0);
}
