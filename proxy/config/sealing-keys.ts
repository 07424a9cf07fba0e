// Sealing keys: the AES-256 keys that encrypt every accountToken the proxy keeps (session records in
// memory and in Redis, and later the saved accounts merchants store). Several keys, each with an id: the
// first seals, every one opens, so a key is rotated by putting a new one first and dropping the old one
// once nothing sealed under it is still wanted.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { commaList } from './fields.ts';

export interface SealingKey {
  /** Written in the clear in every sealed value, so the right key is found without trying them all. */
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

export const SEALING_KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** `id:base64` (standard or url-safe base64 of 32 random bytes), e.g. `2026-11:q83v…`. */
const KEY_ENTRY =
  'id:base64 (an id of letters, digits, "_" or "-", a colon, then 32 random bytes in base64: ' +
  "node -e \"console.log('k1:' + require('crypto').randomBytes(32).toString('base64'))\")";

/**
 * Fewer distinct byte values than this in 32 bytes is no random key (zeros, a repeated byte, a short
 * pattern): 32 random bytes have about 30 distinct values, and fewer than 20 with a chance below 1e-9.
 */
const MIN_DISTINCT_BYTES = 20;

/** Keys a person typed or counted out rather than drew: every byte printable text, or a counting sequence. */
function looksMadeUp(key: Buffer): boolean {
  const printable = key.every((byte) => byte >= 0x20 && byte < 0x7f);
  const step = (key[1]! - key[0]! + 256) % 256;
  const counting = key.every((byte, index) => index === 0 || (byte - key[index - 1]! + 256) % 256 === step);
  return printable || counting;
}

function decodeKey(value: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return undefined;
  const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === SEALING_KEY_BYTES ? bytes : undefined;
}

/** An entry's id and key, checked: the id's form, 32 bytes, and enough distinct bytes to be random. */
function checkedKey(entry: { id: string; key: string | Buffer }, ctx: z.RefinementCtx): SealingKey {
  if (entry.id === '') {
    ctx.addIssue({ code: 'custom', message: `each key must be ${KEY_ENTRY}` });
    return z.NEVER;
  }
  if (!KEY_ID.test(entry.id)) {
    ctx.addIssue({
      code: 'custom',
      message: `key id "${entry.id.slice(0, 40)}" must be 1-32 letters, digits, "_" or "-"`,
    });
    return z.NEVER;
  }
  const key = typeof entry.key === 'string' ? decodeKey(entry.key) : entry.key;
  if (!key || key.length !== SEALING_KEY_BYTES) {
    ctx.addIssue({
      code: 'custom',
      message: `key ${entry.id} must be ${SEALING_KEY_BYTES} bytes in base64; each key is ${KEY_ENTRY}`,
    });
    return z.NEVER;
  }
  if (new Set(key).size < MIN_DISTINCT_BYTES || looksMadeUp(key)) {
    ctx.addIssue({
      code: 'custom',
      message: `key ${entry.id} is not random (too few distinct bytes): generate one with ${KEY_ENTRY}`,
    });
    return z.NEVER;
  }
  return { id: entry.id, key: Buffer.from(key) };
}

/** An entry as `id:base64` text (env) or `{id, key}` (code); text is split at its first colon. */
const KeyEntry = z.preprocess(
  (entry) => {
    if (typeof entry !== 'string') return entry;
    const colon = entry.indexOf(':');
    return colon < 0
      ? { id: '', key: entry }
      : { id: entry.slice(0, colon).trim(), key: entry.slice(colon + 1).trim() };
  },
  z
    .object(
      { id: z.string(), key: z.union([z.instanceof(Buffer), z.string()]) },
      { error: `each key must be ${KEY_ENTRY}` },
    )
    .transform(checkedKey),
);

/** A comma list of `id:base64` entries, or an array of entries; ids unique, at least one key. */
export const SealingKeyList = z
  .preprocess((value) => (typeof value === 'string' ? commaList(value) : value), z.array(KeyEntry))
  .refine((keys) => keys.length > 0, `must name at least one key: ${KEY_ENTRY}`)
  .refine(
    (keys) => new Set(keys.map((k) => k.id)).size === keys.length,
    'key ids must be unique (the id says which key sealed a value)',
  );

/**
 * Sandbox mode's key, derived from a published phrase: anyone can compute it, which is fine for the local
 * sandbox's fake tokens and is exactly why production refuses it (config/schema.ts).
 */
export const SANDBOX_SEALING_KEY: SealingKey = {
  id: 'sandbox',
  key: createHash('sha256').update('obv-link sandbox sealing key: published, never for production').digest(),
};

/** Whether `key` is the published sandbox key, compared by bytes (whatever id or encoding it came with). */
export function isSandboxSealingKey(key: SealingKey): boolean {
  return key.key.equals(SANDBOX_SEALING_KEY.key);
}
