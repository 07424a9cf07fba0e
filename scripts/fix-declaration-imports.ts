// tsc keeps our source's `./x.ts` specifiers in the emitted declarations; consumers resolve `./x.js`.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? 'dist/types';
for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
  if (!file.endsWith('.d.ts')) continue;
  const path = join(dir, file);
  const text = readFileSync(path, 'utf8');
  const fixed = text.replace(/(from\s+['"]\.{1,2}\/[^'"]+?)\.ts(['"])/g, '$1.js$2');
  if (fixed !== text) writeFileSync(path, fixed);
}
