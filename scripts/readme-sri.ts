// Copies the content-hashed element file name and its SRI value from the last `npm run build`
// (dist/cdn/manifest.json) into the README's CDN snippet. Run it after changing the element:
// `npm run build && npx tsx scripts/readme-sri.ts`. (The build itself touches no tracked file.)
import { readFileSync, writeFileSync } from 'node:fs';

const { file, integrity } = JSON.parse(readFileSync('dist/cdn/manifest.json', 'utf8')) as {
  file: string;
  integrity: string;
};
const readme = readFileSync('README.md', 'utf8');
const updated = readme
  .replace(/obv-link-account\.[0-9a-f]{10}\.js/g, file)
  .replace(/integrity="sha384-[A-Za-z0-9+/=]+"/g, `integrity="${integrity}"`);
if (updated === readme) {
  console.log(`README already shows ${file}`);
} else {
  writeFileSync('README.md', updated);
  console.log(`README now shows ${file} ${integrity}`);
}
