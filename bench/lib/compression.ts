// Transfer sizes of a script as a CDN or a merchant's server would serve it.
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

export interface CompressedSize {
  raw: number;
  gzip: number;
  brotli: number;
}

/** Sizes at the strongest common settings: gzip level 9, brotli quality 11. */
export function compressedSize(code: Buffer): CompressedSize {
  return {
    raw: code.length,
    gzip: gzipSync(code, { level: 9 }).length,
    brotli: brotliCompressSync(code, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: code.length },
    }).length,
  };
}
