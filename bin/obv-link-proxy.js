#!/usr/bin/env node
// `npx obv-link-proxy`: the standalone proxy, configured from the environment (docs/PROXY.md "Run it on its own").
// A thin entry over the compiled CLI, so an installed package runs on plain Node. The Node check runs
// first; the rest is imported after it (a static import would load the whole proxy before any line here).
import { exitUnlessSupportedNode } from './supported-node.js';

exitUnlessSupportedNode('obv-link-proxy');
import('./stop-with-npm.js').then(() => import('../dist/proxy/cli.js'));
