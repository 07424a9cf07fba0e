// Browser tests run in Debian's Chromium (never a downloaded browser: the machines have no internet).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chromeLauncher } from '@web/test-runner-chrome';
import { esbuildPlugin } from '@web/dev-server-esbuild';
import { build } from 'vite';
import { CHROMIUM_ARGS, chromiumPath } from './scripts/chromium.ts';

/** Where the browser tests find a fresh production bundle of the element (test/browser/bundle.test.ts). */
export const BUNDLE_DIR = 'test-results/bundle';

/**
 * Builds the element and its custom-elements.json exactly as `npm run build` does, so tests can load what
 * merchants get and check the manifest against the element (test/browser/manifest.test.ts).
 */
const buildBundle = {
  name: 'obv-build-bundle',
  async serverStart() {
    await build({
      configFile: 'vite.config.ts',
      logLevel: 'warn',
      build: { outDir: BUNDLE_DIR, emptyOutDir: true, sourcemap: false },
    });
    const cem = 'node_modules/@custom-elements-manifest/analyzer/cem.js';
    await promisify(execFile)(process.execPath, [
      cem,
      'analyze',
      '--config',
      'widget/custom-elements-manifest.config.mjs',
      '--outdir',
      BUNDLE_DIR,
    ]);
  },
};

/** A merchant page under a strict Content-Security-Policy that loads the bundle (no 'unsafe-inline'). */
const STRICT_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'";
const cspFixture = async (
  ctx: { path: string; type: string; body: unknown; set(name: string, value: string): void },
  next: () => Promise<unknown>,
) => {
  if (ctx.path === '/csp-fixture/page.html') {
    ctx.set('Content-Security-Policy', STRICT_CSP);
    ctx.type = 'html';
    ctx.body = `<!doctype html><html lang="en"><title>CSP fixture</title>
<script src="/csp-fixture/record-violations.js"></script>
<script type="module" src="/${BUNDLE_DIR}/obv-link-account.js"></script>
<form><obv-link-account proxy-url="/obv" link-token="lt_${'csp-page'.repeat(4)}" required></obv-link-account></form></html>`;
    return;
  }
  if (ctx.path === '/csp-fixture/record-violations.js') {
    ctx.type = 'js';
    ctx.body =
      "window.violations = []; document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI));";
    return;
  }
  return next();
};

export default {
  middleware: [cspFixture],
  files: ['test/browser/**/*.test.ts'],
  nodeResolve: true,
  concurrency: 1,
  testFramework: { config: { timeout: 10000 } },
  plugins: [buildBundle, esbuildPlugin({ ts: true, target: 'es2022', tsconfig: 'tsconfig.json' })],
  // Lit announces its development build (used for the source tests) in every page; that is expected.
  filterBrowserLogs: ({ args }: { args: unknown[] }) => !String(args[0]).startsWith('Lit is in dev mode'),
  browsers: [
    chromeLauncher({ launchOptions: { executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS } }),
  ],
};
