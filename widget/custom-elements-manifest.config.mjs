// `cem analyze` reads Lit's internal reactive state (`_state: { state: true }` in `static properties`)
// as public attributes, and lists `#private` members; this plugin keeps the manifest to the element's
// real public API.
export default {
  globs: ['widget/**/*.ts'],
  exclude: ['widget/**/*.styles.ts'],
  litelement: true,
  // Into dist/ (shipped in the package), and never into package.json: the build touches no tracked file.
  outdir: 'dist',
  packagejson: false,
  plugins: [
    {
      name: 'obv-drop-internal-state',
      packageLinkPhase({ customElementsManifest }) {
        for (const mod of customElementsManifest.modules) {
          for (const declaration of mod.declarations ?? []) {
            if (declaration.attributes)
              declaration.attributes = declaration.attributes.filter((a) => !a.name.startsWith('_'));
            if (declaration.members)
              declaration.members = declaration.members.filter((m) => !/^[_#]/.test(m.name) && m.name !== 'properties');
          }
        }
      },
    },
  ],
};
