// 1. Element size: the shipped module, gzip and brotli, beside a bare Lit element bundled with the same
// Vite configuration (the floor any Lit element pays).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, loadConfigFromFile, type InlineConfig, type UserConfig } from 'vite';
import { compressedSize, type CompressedSize } from '../lib/compression.ts';
import type { BenchOptions } from '../lib/options.ts';
import { formatBytes, type SectionResult } from '../lib/report.ts';
import { ELEMENT_GZIP_AIM_BYTES, ELEMENT_GZIP_BUDGET_BYTES } from '../../scripts/element-budget.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST_FILE = join(ROOT, 'dist/obv-link-account.js');
const FIXTURE = fileURLToPath(new URL('../fixtures/bare-element.ts', import.meta.url));

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((entry) => newestMtime(join(path, entry))));
}

/** Runs `npm run build` when dist is missing or older than any widget source or the Vite config. */
function ensureFreshBuild(): boolean {
  const sources = Math.max(
    newestMtime(join(ROOT, 'widget')),
    newestMtime(join(ROOT, 'vite.config.ts')),
    newestMtime(join(ROOT, 'package-lock.json')),
  );
  if (existsSync(DIST_FILE) && statSync(DIST_FILE).mtimeMs >= sources) return false;
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
  if (result.status !== 0 || !existsSync(DIST_FILE)) {
    throw new Error(`npm run build failed (status ${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
  return true;
}

async function projectViteConfig(): Promise<UserConfig> {
  const file = join(ROOT, 'vite.config.ts');
  if (!existsSync(file)) return {};
  const loaded = await loadConfigFromFile({ command: 'build', mode: 'production' }, file, ROOT, 'silent');
  return loaded?.config ?? {};
}

/**
 * Bundles `fixture` with the project's Vite configuration (same minifier, target, plugins and output
 * options), only the entry changed — or, without one, the element itself, as `vite build` makes
 * dist/obv-link-account.js — in memory, and returns the code of every JavaScript chunk.
 */
async function bundle(fixture: string | undefined): Promise<Buffer> {
  const project = await projectViteConfig();
  const projectBuild = project.build ?? {};
  const entry = !fixture
    ? {}
    : projectBuild.lib
      ? { lib: { ...projectBuild.lib, entry: fixture } }
      : { rolldownOptions: { ...projectBuild.rolldownOptions, input: fixture } };
  const config: InlineConfig = {
    ...project,
    configFile: false,
    root: ROOT,
    logLevel: 'silent',
    build: {
      ...projectBuild,
      ...entry,
      outDir: join(tmpdir(), 'obv-bench-fixture'),
      write: false,
      emptyOutDir: false,
      copyPublicDir: false,
    },
  };
  const output = await build(config);
  const outputs = Array.isArray(output) ? output : [output];
  const chunks = outputs.flatMap((bundle) => ('output' in bundle ? bundle.output : []));
  const code = chunks.flatMap((chunk) => (chunk.type === 'chunk' ? [chunk.code] : []));
  if (code.length === 0) throw new Error(`bundling ${fixture ?? 'the element'} produced no JavaScript`);
  return Buffer.from(code.join('\n'));
}

export async function measureElementSize({ quick }: BenchOptions): Promise<SectionResult> {
  // A quick run (CI, a fresh checkout without dist/) bundles the element in memory: the same bytes as
  // `vite build`, without the whole `npm run build` and without touching dist/.
  const rebuilt = quick ? false : ensureFreshBuild();
  const element = compressedSize(quick ? await bundle(undefined) : readFileSync(DIST_FILE));
  const floor = compressedSize(await bundle(FIXTURE));
  const own = (key: keyof CompressedSize): string => `+${formatBytes(element[key] - floor[key])}`;
  return {
    section: 'size',
    rows: [
      {
        metric: 'element size, gzip',
        value: formatBytes(element.gzip),
        baseline: `${formatBytes(floor.gzip)} bare Lit element`,
        comparison: own('gzip'),
        aim: `≤ ${formatBytes(ELEMENT_GZIP_AIM_BYTES)} (budget ${formatBytes(ELEMENT_GZIP_BUDGET_BYTES)})`,
        met: element.gzip <= ELEMENT_GZIP_AIM_BYTES,
      },
      {
        metric: 'element size, brotli',
        value: formatBytes(element.brotli),
        baseline: `${formatBytes(floor.brotli)} bare Lit element`,
        comparison: own('brotli'),
        aim: '',
      },
    ],
    data: {
      element,
      source: quick ? 'bundled in memory' : 'dist/obv-link-account.js',
      bareLitElement: floor,
      budgetGzip: ELEMENT_GZIP_BUDGET_BYTES,
      aimGzip: ELEMENT_GZIP_AIM_BYTES,
      withinBudget: element.gzip <= ELEMENT_GZIP_BUDGET_BYTES,
      rebuilt,
    },
  };
}
