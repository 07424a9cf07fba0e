#!/usr/bin/env node
// `npx obv-link-proxy`: the standalone proxy, configured from the environment (docs/PROXY.md "Run it on its own").
// A thin entry over the compiled CLI, so an installed package runs on plain Node.
import './stop-with-npm.js';
import '../dist/proxy/cli.js';
