// Sealing: AES-256-GCM (node:crypto) over a secret, with a context bound in as additional data, so a
// sealed value opens only where it was sealed for (an accountToken sealed for one session does not open
// in another session's record). Format: `obv1.{keyId}.{base64url(iv ‖ ciphertext ‖ tag)}`, unpadded, in its
// one canonical spelling.
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { pooledRandomBytes } from '../common/random.ts';
import type { SealingKey } from '../config/sealing-keys.ts';

const VERSION = 'obv1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Why a sealed value did not open. */
export type UnsealFailure = 'malformed' | 'unknown-key' | 'tampered';

export class UnsealError extends Error {
  override name = 'UnsealError';
  constructor(
    readonly reason: UnsealFailure,
    readonly keyId?: string,
  ) {
    super(
      reason === 'unknown-key'
        ? `sealed under key "${keyId}", which is not in OBV_SEALING_KEYS`
        : reason === 'tampered'
          ? `the sealed value (key "${keyId}") was altered, sealed for another context, or the key with this id has changed`
          : 'not a sealed value',
    );
  }
}

export interface Sealer {
  /** Encrypts `plaintext` under the first key, bound to `context`. */
  seal(plaintext: string, context: string): string;
  /** Decrypts a value sealed under any configured key for the same `context`; throws UnsealError. */
  open(sealed: string, context: string): string;
}

export function createSealer(keys: readonly SealingKey[]): Sealer {
  const [current] = keys;
  if (!current) throw new TypeError('createSealer needs at least one key');
  const byId = new Map(keys.map((k) => [k.id, k.key]));
  return {
    seal(plaintext, context) {
      // A view into the pool: createCipheriv copies it, and Buffer.concat below copies it into the value.
      const iv = pooledRandomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${VERSION}.${current.id}.${body.toString('base64url')}`;
    },
    open(sealed, context) {
      const [version, keyId, encoded, ...rest] = sealed.split('.');
      if (version !== VERSION || !keyId || !encoded || rest.length > 0 || !/^[A-Za-z0-9_-]+$/.test(encoded)) {
        throw new UnsealError('malformed');
      }
      const key = byId.get(keyId);
      if (!key) throw new UnsealError('unknown-key', keyId);
      const body = Buffer.from(encoded, 'base64url');
      // Strict: Node ignores the unused low bits of the last character, so up to 16 spellings would open
      // to one value; only the one seal() writes is accepted (a sealed string is one saved account's id too).
      if (body.length < IV_BYTES + TAG_BYTES || body.toString('base64url') !== encoded)
        throw new UnsealError('malformed');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, IV_BYTES));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
        return Buffer.concat([
          decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        throw new UnsealError('tampered', keyId);
      }
    },
  };
}
