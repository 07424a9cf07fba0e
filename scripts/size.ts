// The element's transfer size, as a browser downloads it: gzip of the built bundle, with a hard budget.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { ELEMENT_GZIP_AIM_BYTES, ELEMENT_GZIP_BUDGET_BYTES } from './element-budget.ts';

const file = process.argv[2] ?? 'dist/obv-link-account.js';

let source: Buffer;
try {
  source = readFileSync(file);
} catch {
  console.error(`size: ${file} not found; run \`npm run build\` first`);
  process.exit(1);
}
const gzipped = gzipSync(source, { level: 9 }).length;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;
console.log(
  `${file}: ${source.length} bytes minified, ${gzipped} bytes gzip (${kb(gzipped)}; budget ${kb(ELEMENT_GZIP_BUDGET_BYTES)}, target ${kb(ELEMENT_GZIP_AIM_BYTES)})`,
);
if (gzipped > ELEMENT_GZIP_BUDGET_BYTES) {
  console.error(`size: over budget by ${gzipped - ELEMENT_GZIP_BUDGET_BYTES} bytes`);
  process.exit(1);
}
