// The page gets production code: at start the demo bundles the element and the checkout script with
// Vite's build API (minified, no dev server, no HMR client) and serves the output from memory.
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Rolldown } from 'vite';

export interface Asset {
  body: string | Uint8Array;
  contentType: string;
}

/** Built and static files keyed by their path under `/assets/`, e.g. `checkout.js`. */
export type AssetMap = ReadonlyMap<string, Asset>;

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PAGE_DIR = fileURLToPath(new URL('../page/', import.meta.url));

/** The element's entry: the module that defines `<obv-link-account>` (the widget's bundle entry). */
export const WIDGET_ENTRY = join(REPO_ROOT, 'widget/obv-link-account.ts');
const CHECKOUT_ENTRY = join(PAGE_DIR, 'checkout.ts');

/** Files served as they are from `demo/checkout/page/`. */
const STATIC_FILES = ['checkout.css', 'images/logo.svg', 'images/coffee-bag.svg', 'images/dripper.svg'];

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8',
};

function contentTypeOf(path: string): string {
  return CONTENT_TYPES[extname(path)] ?? 'application/octet-stream';
}

async function bundle(entries: Record<string, string>): Promise<Map<string, Asset>> {
  const result = await build({
    configFile: false,
    root: REPO_ROOT,
    logLevel: 'warn',
    publicDir: false,
    build: {
      write: false,
      target: 'es2022',
      minify: true,
      sourcemap: false,
      modulePreload: false,
      copyPublicDir: false,
      reportCompressedSize: false,
      rolldownOptions: {
        input: entries,
        // Entry modules are loaded by the page's <script type="module"> tags, so their exports must stay.
        preserveEntrySignatures: 'exports-only',
        output: { entryFileNames: '[name].js', chunkFileNames: 'chunks/[name]-[hash].js', format: 'es' },
      },
    },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
  const assets = new Map<string, Asset>();
  for (const output of outputs) {
    for (const file of output.output) {
      const body = file.type === 'chunk' ? file.code : file.source;
      assets.set(file.fileName, { body, contentType: contentTypeOf(file.fileName) });
    }
  }
  return assets;
}

async function staticFiles(): Promise<Map<string, Asset>> {
  const entries = await Promise.all(
    STATIC_FILES.map(async (path) => [path, { body: await readFile(join(PAGE_DIR, path)), contentType: contentTypeOf(path) }] as const),
  );
  return new Map(entries);
}

let cached: Promise<AssetMap> | undefined;

/**
 * Builds the element and the checkout script once per process (tests start several demos) and reads
 * the static files. A failed build is not cached, so the next start tries again.
 */
export function loadAssets(): Promise<AssetMap> {
  cached ??= Promise.all([bundle({ 'obv-link-account': WIDGET_ENTRY, checkout: CHECKOUT_ENTRY }), staticFiles()]).then(
    ([built, files]) => new Map([...files, ...built]),
  );
  cached.catch(() => {
    cached = undefined;
  });
  return cached;
}
