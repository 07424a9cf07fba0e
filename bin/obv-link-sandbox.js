#!/usr/bin/env node
// `npx obv-link-sandbox`: the sandbox provider, configured from PROVIDER_* variables (docs/SANDBOX.md).
// The Node check runs first; the rest is imported after it (see obv-link-proxy.js).
import { exitUnlessSupportedNode } from './supported-node.js';

exitUnlessSupportedNode('obv-link-sandbox');
import('./stop-with-npm.js').then(() => import('../dist/sandbox/cli.js'));
