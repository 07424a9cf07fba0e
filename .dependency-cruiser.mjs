// The proxy's folder layers, written down once (docs/ARCHITECTURE.md draws the same picture). A file of
// proxy/ may import files of its own folder and of the folders listed BELOW its own, never above: so no
// import cycle between folders can form, and a newcomer reads a step from the route down. The proxy's
// root (index.ts and the composition root beside it) is above every folder; nothing of a folder imports
// it. test/node/proxy/layers.test.ts runs these rules (and fails on a folder missing from the list);
// `npx depcruise proxy` shows the same findings.
//
// Narrower than the order: the relay reaches only storage (and the HTTP plumbing, common, config); the
// pages only the words; the words nothing at all.

/** Top to bottom. */
export const LAYERS = [
  'cli', // the CLI's commands (help, init, doctor): text and checks over everything below
  'routes', // one file per HTTP route: parse, call one service, answer
  'relay', // the WebSocket relay
  'http', // HTTP plumbing the routes share (problem+json, CORS, cookies, API keys)
  'openapi', // the OpenAPI document's types and builder
  // The domain services, each folder one create…(deps), in the order of the purchase's steps they serve.
  'payments',
  'notifications',
  'verifications',
  'link-sessions',
  'accounts',
  'events',
  // What the services stand on.
  'pages',
  'sealing',
  'upstream',
  'storage',
  'words',
  'common',
  'config',
];

/** The folders each of these may import, besides its own (narrower than the order). */
export const ONLY = {
  relay: ['http', 'storage', 'common', 'config'],
  pages: ['words', 'common', 'config'],
  words: [],
};

const folder = (name) => `^proxy/${name}/`;
const ROOT_FILE = '^proxy/[^/]+[.]ts$';

export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Files that import each other, directly or through others (type-only imports count too).',
      from: { path: '^proxy/' },
      to: { circular: true },
    },
    ...LAYERS.map((layer, index) => ({
      name: `layer-${layer}`,
      severity: 'error',
      comment: `proxy/${layer}/ imports only its own folder and the folders below it (${LAYERS.slice(index + 1).join(', ')}), never the root.`,
      from: { path: folder(layer) },
      to: { path: [ROOT_FILE, ...LAYERS.slice(0, index).map(folder)] },
    })),
    ...Object.entries(ONLY).map(([layer, allowed]) => ({
      name: `only-${layer}`,
      severity: 'error',
      comment: `proxy/${layer}/ imports only ${allowed.length > 0 ? allowed.join(', ') : 'nothing of the proxy'} (besides itself).`,
      from: { path: folder(layer) },
      to: { path: '^proxy/', pathNot: [folder(layer), ...allowed.map(folder)] },
    })),
  ],
  options: {
    includeOnly: '^(proxy|contracts)/',
    // Type-only imports are dependencies too: a type cycle is a cycle.
    tsPreCompilationDeps: true,
    moduleSystems: ['es6'],
  },
};
