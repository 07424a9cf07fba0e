// The page gets production code: at start the demo builds the element with the package's own
// vite.config.ts and the checkout script with Vite's build API (minified, no dev server, no HMR
// client), and serves the output from memory: nothing is written to dist/.
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type InlineConfig, type Rolldown } from 'vite';

export interface Asset {
  body: string | Uint8Array;
  contentType: string;
}

/** Built and static files keyed by their path under `/assets/`, e.g. `checkout.js`. */
export type AssetMap = ReadonlyMap<string, Asset>;

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PAGE_DIR = fileURLToPath(new URL('../page/', import.meta.url));

/** The element's production build: the repository's vite.config.ts, as `npm run build` runs it. */
const WIDGET_CONFIG = join(REPO_ROOT, 'vite.config.ts');
const ELEMENT_BUNDLE = 'obv-link-account.js';
const CHECKOUT_ENTRY = join(PAGE_DIR, 'checkout.ts');

/** Files served as they are from `demo/checkout/page/`. */
const STATIC_FILES = ['checkout.css', 'images/logo.svg', 'images/coffee-bag.svg', 'images/dripper.svg'];

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

function contentTypeOf(path: string): string {
  return CONTENT_TYPES[extname(path)] ?? 'application/octet-stream';
}

/** Runs a Vite build in memory (`write: false`) and returns its JavaScript chunks by file name. */
async function buildInMemory(config: InlineConfig): Promise<Map<string, Asset>> {
  const result = await build({
    root: REPO_ROOT,
    logLevel: 'warn',
    ...config,
    build: { ...config.build, write: false },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
  const assets = new Map<string, Asset>();
  for (const output of outputs) {
    for (const file of output.output) {
      if (file.type === 'chunk')
        assets.set(file.fileName, { body: file.code, contentType: contentTypeOf(file.fileName) });
    }
  }
  return assets;
}

/** The element exactly as the package ships it (the config's terser settings, CSS minification, one file). */
async function buildElement(): Promise<Map<string, Asset>> {
  const built = await buildInMemory({ configFile: WIDGET_CONFIG, build: { emptyOutDir: false } });
  const bundle = built.get(ELEMENT_BUNDLE);
  if (!bundle) throw new Error(`the widget build produced no ${ELEMENT_BUNDLE} (check vite.config.ts)`);
  return new Map([[ELEMENT_BUNDLE, bundle]]);
}

/** The checkout page's own script: a merchant's code, bundled on its own (it only imports types of the element). */
function buildCheckoutScript(): Promise<Map<string, Asset>> {
  return buildInMemory({
    configFile: false,
    publicDir: false,
    build: {
      target: 'es2022',
      minify: true,
      sourcemap: false,
      modulePreload: false,
      copyPublicDir: false,
      reportCompressedSize: false,
      rolldownOptions: {
        input: { checkout: CHECKOUT_ENTRY },
        output: { entryFileNames: '[name].js', format: 'es', codeSplitting: false },
      },
    },
  });
}

async function staticFiles(): Promise<Map<string, Asset>> {
  const entries = await Promise.all(
    STATIC_FILES.map(
      async (path) => [path, { body: await readFile(join(PAGE_DIR, path)), contentType: contentTypeOf(path) }] as const,
    ),
  );
  return new Map(entries);
}

let cached: Promise<AssetMap> | undefined;

/**
 * Builds the element and the checkout script once per process (tests start several demos) and reads
 * the static files. A failed build is not cached, so the next start tries again.
 */
export function loadAssets(): Promise<AssetMap> {
  cached ??= Promise.all([buildElement(), buildCheckoutScript(), staticFiles()]).then(
    ([element, script, files]) => new Map([...files, ...element, ...script]),
  );
  cached.catch(() => {
    cached = undefined;
  });
  return cached;
}
