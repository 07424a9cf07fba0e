#!/usr/bin/env node
// `npx obv-link-sandbox`: the sandbox provider, configured from PROVIDER_* variables (docs/SANDBOX.md).
import './stop-with-npm.js';
import '../dist/sandbox/cli.js';
