// This package's version, for `npx obv-link-sandbox --version` (the sandbox imports nothing of the proxy).
import { readFileSync } from 'node:fs';

/** The version in the package.json above this file (one level up in the checkout, two in dist/). */
export function packageVersion(): string {
  for (let up = 1; up <= 3; up++) {
    try {
      const manifest = JSON.parse(
        readFileSync(new URL(`${'../'.repeat(up)}package.json`, import.meta.url), 'utf8'),
      ) as { name?: string; version?: string };
      if (manifest.name === 'obv-link' && manifest.version) return manifest.version;
    } catch {
      // not at this level
    }
  }
  return '0.0.0';
}
