// Random bytes for ids and IVs, drawn from the CSPRNG 4 KiB at a time. `randomBytes(16)` per id is a
// synchronous OpenSSL call each time, with its own job object and buffer: on the notification route (a
// link reference, an event id, a sealing IV) it was 3–5 % of the proxy's busy time, more than the
// signature check (docs/PERFORMANCE.md, "Where a notification's time goes"). Node's own randomUUID()
// caches its entropy the same way. Each byte is handed out once; a refill is a new buffer, so a view
// handed out earlier is never overwritten.
import { randomBytes } from 'node:crypto';

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

/** `size` (≤ 4096) fresh random bytes, as a view into the pool: copy it if it must outlive the call's use. */
export function pooledRandomBytes(size: number): Buffer {
  if (size > POOL_BYTES) return randomBytes(size);
  if (offset + size > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + size);
  offset += size;
  return bytes;
}
