// What the provider writes (field errors, failure messages) is the provider's text, not the proxy's: it
// may echo the values it was sent — an accountToken in a re-verification — so it never goes to a browser.
// The browser gets the proxy's own words; the provider's text goes to the log, scrubbed and clipped.
import type { FieldError } from '../common/errors.ts';

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

/** The shortest run of a secret (or of an encoding of it) that counts as an echo of it. */
const MIN_ECHO_CHARACTERS = 8;
const BASE64_CHARACTER = /[A-Za-z0-9+/_-]/;

/**
 * `text` with ASCII letters in lower case, and nothing else changed: every character stays at its index, so
 * what is found in the folded text is cut at the same place in the text itself. A provider that upper-cases
 * what it echoes (`TOK_A1B2…` for `tok_a1b2…`) still echoes the secret.
 */
function fold(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
}

interface EchoGrams {
  plain: Set<string>;
  base64: Set<string>;
}

/**
 * The runs of MIN_ECHO_CHARACTERS that betray `secrets` when echoed, folded (any case): of each secret as it
 * is, URL-encoded, in hex, and in base64 and base64url from each of its first three characters (a part of
 * the secret encodes to a piece of one of these three, whatever its offset, but for its last group).
 */
function echoGrams(secrets: readonly string[]): EchoGrams {
  const plain = new Set<string>();
  const base64 = new Set<string>();
  const addGrams = (set: Set<string>, form: string) => {
    const folded = fold(form);
    for (let i = 0; i + MIN_ECHO_CHARACTERS <= folded.length; i++) set.add(folded.slice(i, i + MIN_ECHO_CHARACTERS));
  };
  for (const secret of secrets) {
    const bytes = Buffer.from(secret, 'utf8');
    for (const form of [secret, encodeURIComponent(secret), bytes.toString('hex')]) addGrams(plain, form);
    for (const shift of [0, 1, 2]) {
      addGrams(base64, bytes.subarray(shift).toString('base64'));
      addGrams(base64, bytes.subarray(shift).toString('base64url'));
    }
  }
  return { plain, base64 };
}

/** `text` with every occurrence of `secret`, in any case, replaced by [redacted]. */
function redactWhole(text: string, secret: string): string {
  const folded = fold(text);
  const wanted = fold(secret);
  let result = '';
  let from = 0;
  for (let at = folded.indexOf(wanted); at >= 0; at = folded.indexOf(wanted, from)) {
    result += text.slice(from, at) + REDACTED;
    from = at + wanted.length;
  }
  return result + text.slice(from);
}

/**
 * `text` with every echo of `secrets` replaced by [redacted], in any case: each whole secret, and any run
 * of at least MIN_ECHO_CHARACTERS of a secret or of its encodings (a provider may echo a prefix, or a token
 * it re-encoded). A base64 echo loses its last characters too (a partial group still holds a byte).
 */
function redactSecrets(text: string, secrets: readonly string[], grams: EchoGrams = echoGrams(secrets)): string {
  let whole = text;
  for (const secret of secrets) whole = redactWhole(whole, secret);
  const { plain, base64 } = grams;
  const folded = fold(whole);
  const covered = new Uint8Array(whole.length); // 1 = part of an echo, 2 = part of a base64 echo
  for (let i = 0; i + MIN_ECHO_CHARACTERS <= whole.length; i++) {
    const gram = folded.slice(i, i + MIN_ECHO_CHARACTERS);
    const mark = base64.has(gram) ? 2 : plain.has(gram) ? 1 : 0;
    for (let j = i; mark > 0 && j < i + MIN_ECHO_CHARACTERS; j++) covered[j] = Math.max(covered[j]!, mark);
  }
  let result = '';
  for (let i = 0; i < whole.length;) {
    if (!covered[i]) {
      result += whole[i];
      i++;
      continue;
    }
    let end = i;
    let encoded = false;
    for (; end < whole.length && covered[end]; end++) if (covered[end] === 2) encoded = true;
    for (let extra = 0; encoded && extra < 3 && end < whole.length && BASE64_CHARACTER.test(whole[end]!); extra++)
      end++;
    while (encoded && whole[end] === '=') end++;
    result += REDACTED;
    i = end;
  }
  return result;
}

/** Provider text fit for a log line: `known` secrets (and their echoes) and anything token-shaped removed, then clipped. */
export function scrubProviderText(text: string, known: readonly (string | undefined)[] = []): string {
  let scrubbed = redactSecrets(
    text,
    known.filter((secret): secret is string => !!secret),
  );
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
  return providerFieldErrors(body).map(({ path, message }) => ({
    path: scrubProviderText(path),
    message: scrubProviderText(message),
  }));
}

/**
 * `body` with every string holding one of `secrets`, a run of 8+ characters of one, or of its base64,
 * base64url, hex or URL-encoded form, in any case, rewritten without it (a deep copy).
 */
export function withoutSecrets(body: unknown, secrets: readonly (string | undefined)[]): unknown {
  const present = secrets.filter((secret): secret is string => !!secret);
  if (present.length === 0) return body;
  // The secrets' runs once per body, not once per string in it: building them is most of the walk's work
  // (about 200 µs a payment answer when they were built for each key and value).
  const grams = echoGrams(present);
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return redactSecrets(value, present, grams);
    if (typeof value !== 'object' || value === null) return value;
    // Deeper than the walk goes: kept whole only when its JSON holds no echo, else replaced as a whole.
    if (depth > 8)
      return redactSecrets(JSON.stringify(value), present, grams) === JSON.stringify(value) ? value : REDACTED;
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1));
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [walk(key, depth + 1) as string, walk(item, depth + 1)]),
    );
  };
  return walk(body, 0);
}
