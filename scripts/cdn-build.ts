// The element for a <script> tag from a CDN or a static folder: the self-contained bundle copied under a
// content-hashed name (cache it forever) with its Subresource Integrity value, printed and kept in
// dist/cdn/manifest.json for deploy scripts. Runs after `vite build` (part of `npm run build`).
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'dist';
const bundle = readFileSync(join(dist, 'obv-link-account.js'));
const digest = createHash('sha384').update(bundle).digest();
const file = `obv-link-account.${digest.toString('hex').slice(0, 10)}.js`;
const integrity = `sha384-${digest.toString('base64')}`;

mkdirSync(join(dist, 'cdn'), { recursive: true });
writeFileSync(join(dist, 'cdn', file), bundle);
writeFileSync(join(dist, 'cdn', 'manifest.json'), `${JSON.stringify({ file, integrity }, null, 2)}\n`);
console.log(`dist/cdn/${file}\nintegrity: ${integrity}`);
console.log(`<script type="module" src="…/${file}" integrity="${integrity}" crossorigin="anonymous"></script>`);
