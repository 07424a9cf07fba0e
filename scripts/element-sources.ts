// Where the element's bytes come from: each source file's share of the built bundle, by its source map
// (`build.sourcemap`, written beside the bundle), minified and gzip. The gzip figure of a source is what the
// bundle's gzip shrinks by when that source's bytes are blanked out: what cutting it would give back.
// Usage: npm run build && sh scripts/node.sh tsx scripts/element-sources.ts [dist/obv-link-account.js]
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const file = process.argv[2] ?? 'dist/obv-link-account.js';
const code = readFileSync(file, 'utf8');
const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[]; mappings: string };

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** One segment's fields (Base64 VLQ, as source maps write them). */
function decodeSegment(segment: string): number[] {
  const values: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of segment) {
    const digit = BASE64.indexOf(char);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
    } else {
      values.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = shift = 0;
    }
  }
  return values;
}

// Each generated character's source, by the segment that starts at or before it on its line.
const owner = new Int32Array(code.length).fill(-1);
const lines = code.split('\n');
let source = 0;
let offset = 0;
map.mappings.split(';').forEach((mappings, line) => {
  let column = 0;
  const starts: Array<[column: number, source: number]> = [];
  for (const segment of mappings.split(',').filter(Boolean)) {
    const fields = decodeSegment(segment);
    column += fields[0]!;
    if (fields.length > 1) source += fields[1]!;
    starts.push([column, fields.length > 1 ? source : -1]);
  }
  const length = lines[line]?.length ?? 0;
  starts.forEach(([from, owned], index) =>
    owner.fill(owned, offset + from, offset + (starts[index + 1]?.[0] ?? length)),
  );
  offset += length + 1;
});

const gzip = (text: string) => gzipSync(text, { level: 9 }).length;
const total = gzip(code);
const rows = [...map.sources.keys(), -1].map((index) => {
  let minified = 0;
  let blanked = '';
  for (let i = 0; i < code.length; i++) {
    const mine = owner[i] === index;
    if (mine) minified++;
    blanked += mine ? '' : code[i];
  }
  // Sources are relative to the map: named from the repository (Lit's by its package).
  const name =
    index < 0
      ? '(unmapped)'
      : relative(process.cwd(), resolve(dirname(file), map.sources[index]!)).replace(/^node_modules\//, '');
  return { name, minified, gzip: total - gzip(blanked) };
});
rows.sort((a, b) => b.gzip - a.gzip);
console.log(`${file}: ${code.length} bytes minified, ${total} gzip`);
for (const { name, minified, gzip: bytes } of rows)
  if (minified) console.log(`${String(bytes).padStart(6)} gzip ${String(minified).padStart(6)} min  ${name}`);
