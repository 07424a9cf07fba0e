// The merchant server's API keys: several at once, each with an id, so a key is rotated without downtime
// (add the new key, move the servers to it, drop the old one). The id names the key in logs and metrics
// (a configured, bounded label); the key itself is never written anywhere. OBV_MERCHANT_API_KEY stays the
// one-key form: its key has the id `default`.
import { z } from 'zod';
import { commaList } from './fields.ts';

export interface MerchantApiKey {
  /** Names the key in logs and in the `key_id` label of `obv_merchant_api_requests_total`. */
  id: string;
  key: string;
}

/** The id of the one key OBV_MERCHANT_API_KEY (merchantApiKey) sets. */
export const DEFAULT_MERCHANT_KEY_ID = 'default';
/** At most this many keys: two during a rotation, a few per server fleet; the ids are a metrics label. */
export const MAX_MERCHANT_API_KEYS = 10;
/** Shortest key in any mode (production wants more, config/schema.ts). */
export const MIN_API_KEY_LENGTH = 24;

const KEY_ID = /^[A-Za-z0-9._-]{1,32}$/;
const ENTRY =
  'id:key (an id of 1-32 letters, digits, ".", "_" or "-", a colon, then the key: e.g. 2026-11:$(openssl rand -base64 32))';

/** An entry as `id:key` text (env) or `{id, key}` (code); text is split at its first colon. */
const KeyEntry = z.preprocess(
  (entry) => {
    if (typeof entry !== 'string') return entry;
    const colon = entry.indexOf(':');
    return colon < 0
      ? { id: '', key: entry }
      : { id: entry.slice(0, colon).trim(), key: entry.slice(colon + 1).trim() };
  },
  z
    .object({ id: z.string(), key: z.string() }, { error: `each key must be ${ENTRY}` })
    .transform((entry, ctx): MerchantApiKey => {
      if (!KEY_ID.test(entry.id)) {
        ctx.addIssue({
          code: 'custom',
          message:
            entry.id === ''
              ? `each key must be ${ENTRY}`
              : `key id "${entry.id.slice(0, 40)}" must be 1-32 letters, digits, ".", "_" or "-"`,
        });
        return z.NEVER;
      }
      const key = entry.key.trim();
      if (key.length < MIN_API_KEY_LENGTH) {
        ctx.addIssue({ code: 'custom', message: `key ${entry.id} must be at least ${MIN_API_KEY_LENGTH} characters` });
        return z.NEVER;
      }
      return { id: entry.id, key };
    }),
);

/** A comma list of `id:key` entries, or an array of `{id, key}`: ids unique, keys unique, 1 to 10 keys. */
export const MerchantApiKeyList = z
  .preprocess((value) => (typeof value === 'string' ? commaList(value) : value), z.array(KeyEntry))
  .refine((keys) => keys.length > 0, `must name at least one key: ${ENTRY}`)
  .refine(
    (keys) => keys.length <= MAX_MERCHANT_API_KEYS,
    `must name at most ${MAX_MERCHANT_API_KEYS} keys (their ids are a metrics label)`,
  )
  .refine(
    (keys) => new Set(keys.map((k) => k.id)).size === keys.length,
    'key ids must be unique (the id names the key in logs and metrics)',
  )
  .refine(
    (keys) => new Set(keys.map((k) => k.key)).size === keys.length,
    'keys must differ: the same key under two ids could not say which one was used',
  );

/** The keys a configuration accepts: OBV_MERCHANT_API_KEYS, or OBV_MERCHANT_API_KEY as the key `default`, or none. */
export function merchantApiKeys(config: {
  merchantApiKey?: string | undefined;
  merchantApiKeys?: readonly MerchantApiKey[] | undefined;
}): readonly MerchantApiKey[] {
  if (config.merchantApiKeys) return config.merchantApiKeys;
  return config.merchantApiKey ? [{ id: DEFAULT_MERCHANT_KEY_ID, key: config.merchantApiKey }] : [];
}
