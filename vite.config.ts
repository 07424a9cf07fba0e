// Builds the element into ONE ES module with Lit inside (merchants add a single <script type="module">).
// Not Vite's library mode: for ES libraries it keeps whitespace, and this file ships to browsers as is.
import { defineConfig, type Plugin } from 'vite';
import { minifyHtmlTemplates } from './scripts/minify-html-templates.ts';

/** Collapses the whitespace of the stylesheet template in *.styles.ts: it would ship as written. */
function minifyCssTemplates(): Plugin {
  return {
    name: 'obv-minify-css-templates',
    apply: 'build',
    transform(code, id) {
      if (!id.endsWith('.styles.ts')) return null;
      const minifiedCode = code.replace(/unsafeCSS\(`([^`]*)`/g, (_, body: string) => {
        const minified = body
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/\s+/g, ' ')
          .replace(/\s*([{};,>])\s*/g, '$1')
          .replace(/([^\s(]):\s/g, '$1:')
          .replace(/([\s:,(])0\./g, '$1.')
          .replace(/;}/g, '}')
          .trim();
        return `unsafeCSS(\`${minified}\``;
      });
      // Only whitespace inside one template changes; no source map worth keeping for that.
      return { code: minifiedCode, map: null };
    },
  };
}

export default defineConfig({
  publicDir: false,
  plugins: [minifyCssTemplates(), minifyHtmlTemplates()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Terser, because it can shorten the element's underscore-prefixed internals (Lit's own are `_$…`).
    minify: 'terser',
    terserOptions: {
      module: true,
      ecma: 2020,
      // pure_getters: reading a property has no side effect (true of the element and Lit); keep_fargs: unused
      // trailing parameters may go. Together ≈16 gzip bytes.
      compress: { passes: 3, pure_getters: true, keep_fargs: false },
      // Also Lit's own `_$AH`-style internals: Lit is bundled whole, so no other copy reads them (the
      // cross-copy markers, `_$lit…$` and `_$cssResult$`, keep their names). And, by name, members of the
      // flow's own objects that nothing outside the bundle sees: the LinkFlow methods (link-flow.ts), its
      // FlowTarget (base, storageKey, purchase, opener, request), its status fields (session, tab) and
      // linked account (label), and the watch's networkError handler. Each is read in the bundle only on those
      // objects, never on a DOM or Lit object, a wire message, an event detail or as a `strings` key: check
      // the built bundle before adding one. `builtins: true` because several are DOM names too (`opener`,
      // `label`, `configure`...): only the names listed here are shortened, wherever they appear. Not
      // `cancelled`, `expired`, `error` (`strings` keys, or keys of the element's titles by state),
      // `outcome`, `lang`, `text` (wire), `kind`, `message` (event details), `account`, `language`, `start`
      // (the element's own API) or `status`.
      mangle: { properties: { regex: /^_[a-z]|^_\$[A-Z][A-Za-z]?$|^(canGoBack|configure|resume|linkOpened|networkError|storageKey|purchase|base|request|session|tab|label|opener)$/, builtins: true } },
      format: { comments: false },
    },
    // The map is published beside the bundle but not referenced from it: one comment less in every download.
    sourcemap: 'hidden',
    modulePreload: false,
    rolldownOptions: {
      input: 'widget/obv-link-account.ts',
      // Keep the entry's exports (the class, tagName) so pages can also import it as a module.
      preserveEntrySignatures: 'exports-only',
      // Terser is slow by design (it is what buys the bytes); no need to report it on every build.
      checks: { bundlerTimings: false },
      output: { format: 'es', entryFileNames: 'obv-link-account.js', codeSplitting: false },
    },
  },
});
