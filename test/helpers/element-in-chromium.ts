// What the element's layout tests share: the element built exactly as `npm run build` ships it, axe's
// source to inject (and its WCAG 2.2 run), a headless Chromium and a three-at-a-time loop; `close()` ends the browser and removes the build.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { CHROMIUM_ARGS, chromiumPath } from '../../scripts/chromium.ts';

export interface ElementInChromium {
  browser: Browser;
  /** The production bundle's source. */
  bundle: string;
  /** The WCAG 2.2 A/AA violations axe finds in the page's element, as `id (node count)`. */
  axeViolations(page: Page): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * Runs `check` on every case, three pages at a time: each mostly waits on the browser, and 2 cores are
 * shared with other tests.
 */
export async function threeAtATime<T>(cases: readonly T[], check: (item: T) => Promise<void>): Promise<void> {
  const queue = [...cases];
  await Promise.all(
    [0, 1, 2].map(async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await check(next);
    }),
  );
}

/** Builds the element into a temp folder, reads axe and launches Chromium; `shotDir` is created for the pictures. */
export async function startElementInChromium(shotDir: string): Promise<ElementInChromium> {
  const buildDir = mkdtempSync(join(tmpdir(), 'obv-layout-'));
  await build({
    configFile: 'vite.config.ts',
    logLevel: 'warn',
    build: { outDir: buildDir, emptyOutDir: true, sourcemap: false },
  });
  const bundle = readFileSync(join(buildDir, 'obv-link-account.js'), 'utf8');
  const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
  mkdirSync(shotDir, { recursive: true });
  return {
    browser,
    bundle,
    async axeViolations(page) {
      await page.addScriptTag({ content: axeSource });
      return page.evaluate(async () => {
        const { axe } = window as unknown as {
          axe: {
            run(context: Element, options: object): Promise<{ violations: Array<{ id: string; nodes: unknown[] }> }>;
          };
        };
        const tags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa'];
        const results = await axe.run(document.querySelector('obv-link-account')!, {
          runOnly: { type: 'tag', values: tags },
        });
        return results.violations.map((violation) => `${violation.id} (${violation.nodes.length})`);
      });
    },
    async close() {
      await browser.close();
      rmSync(buildDir, { recursive: true, force: true });
    },
  };
}
