// What the element's layout tests share: the element built exactly as `npm run build` ships it, axe's
// source to inject, and a headless Chromium; `close()` ends the browser and removes the build.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { build } from 'vite';
import { CHROMIUM_ARGS, chromiumPath } from '../../scripts/chromium.ts';

export interface ElementInChromium {
  browser: Browser;
  /** The production bundle's source. */
  bundle: string;
  /** axe-core, to evaluate in a page. */
  axeSource: string;
  close(): Promise<void>;
}

/** Builds the element into a temp folder, reads axe and launches Chromium; `shotDir` is created for the pictures. */
export async function startElementInChromium(shotDir: string): Promise<ElementInChromium> {
  const buildDir = mkdtempSync(join(tmpdir(), 'obv-layout-'));
  await build({ configFile: 'vite.config.ts', logLevel: 'warn', build: { outDir: buildDir, emptyOutDir: true, sourcemap: false } });
  const bundle = readFileSync(join(buildDir, 'obv-link-account.js'), 'utf8');
  const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
  mkdirSync(shotDir, { recursive: true });
  return {
    browser,
    bundle,
    axeSource,
    async close() {
      await browser.close();
      rmSync(buildDir, { recursive: true, force: true });
    },
  };
}
