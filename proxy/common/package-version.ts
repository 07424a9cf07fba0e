// This package's version, for `--version` and the OpenAPI document.
import { readFileSync } from 'node:fs';

/** The version in the package.json above this file (two levels up in the checkout, three in dist/). */
export function packageVersion(): string {
  for (let up = 2; up <= 4; up++) {
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
