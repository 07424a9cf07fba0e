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
        // The stylesheet's own custom properties (`--_accent`, never the documented `--obv-…`) are named for
        // reading; nothing outside it sets or reads them, so each ships as `--_` and one letter (18 gzip bytes).
        const names = [...new Set(minified.match(/--_[\w-]+/g))];
        return `unsafeCSS(\`${minified.replace(/--_[\w-]+/g, (name) => `--_${(names.indexOf(name) + 10).toString(36)}`)}\``;
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
      // trailing parameters may go. Together ≈16 gzip bytes. unsafe_arrows: a function expression that uses
      // no `this` becomes an arrow (nothing here calls one with `new`); unsafe_comps: `a<b` may become `b>a`
      // (no operand has a valueOf with side effects); reduce_funcs off: single-use functions stay where they
      // are declared rather than copied inline. Together ≈16 gzip bytes more (the browser tests run the build).
      compress: {
        passes: 3,
        pure_getters: true,
        keep_fargs: false,
        unsafe_arrows: true,
        unsafe_comps: true,
        reduce_funcs: false,
      },
      // Only names that say they are private: the element's `_underscore` members and Lit's own `_$AH`-style
      // internals (Lit is bundled whole, so no other copy reads them; the cross-copy markers, `_$lit…$` and
      // `_$cssResult$`, keep their names). No hand-kept list of public-looking names: one wrong entry
      // would rename a DOM or wire property everywhere (issue 20: plain code over renaming tricks).
      mangle: { properties: { regex: /^_[a-z]|^_\$[A-Z][A-Za-z]?$/ } },
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
      output: {
        format: 'es',
        entryFileNames: 'obv-link-account.js',
        codeSplitting: false,
        // Server renderers (Next.js, Nuxt, plain Node) import the element without a DOM: when the module
        // loads, Lit's base class extends HTMLElement and lit-html asks `document` for a tree walker. The
        // bundle binds both names itself: to the browser's objects, or on a server to stand-ins (what Lit's
        // own Node build uses; nothing renders there), leaving the server's globals alone. The entry
        // registers the tag only where customElements exists.
        intro:
          'const HTMLElement = globalThis.HTMLElement ?? class {}, document = globalThis.document ?? { createTreeWalker() {} };',
      },
    },
  },
});
