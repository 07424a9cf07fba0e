// `npm run build`: writes the proxy's OpenAPI document to dist/openapi.json (the package exports it as
// `obv-link/openapi.json`). Its server is the default mount path (OBV_MOUNT_PATH's default), relative to
// wherever the proxy runs; a running proxy serves the same document with its own public URL at
// {mount}/openapi.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { proxyOpenApiDocument } from '../proxy/routes/operations.ts';

const target = process.argv[2] ?? 'dist/openapi.json';
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, `${JSON.stringify(proxyOpenApiDocument('/obv'), null, 2)}\n`);
console.log(`openapi: wrote ${target}`);
