// Node binaries besides the one running the tests: the lowest Node the package supports (the floor of
// package.json's engines.node), fetched by scripts/node.sh as it fetches the default runtime, and a Node
// the package does not support (Debian's /usr/bin/node on these machines: Node 20).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** package.json's engines.node, e.g. `^22.13.0 || >=23.4.0`. */
export function enginesNode(): string {
  return (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines
    .node;
}

/** The lowest version engines.node admits: its first `X.Y.Z` (the ranges are written lowest first). */
export function lowestSupportedNode(): string {
  const lowest = /\d+\.\d+\.\d+/.exec(enginesNode())?.[0];
  if (!lowest) throw new Error(`no version in engines.node "${enginesNode()}"`);
  return lowest;
}

/** Whether version `a` (X.Y.Z) is lower than `b`. */
export function versionBelow(a: string, b: string): boolean {
  const [x, y] = [a, b].map((version) => version.split('.').map(Number)) as [number[], number[]];
  for (let i = 0; i < 3; i += 1) if (x[i] !== y[i]) return (x[i] ?? 0) < (y[i] ?? 0);
  return false;
}

/** The path of Node `version`'s binary, fetched by scripts/node.sh into .runtime/ (once; ~30 MB from the npm registry). */
export async function fetchedNode(version: string): Promise<string> {
  const env = { ...process.env, OBV_NODE_VERSION: version, OBV_NODE_FORCE: '1' };
  const { stdout } = await run('sh', ['scripts/node.sh', 'node', '-p', 'process.execPath'], {
    cwd: ROOT,
    env,
    timeout: 300_000,
  });
  return stdout.trim();
}

/** The version of the Node binary at `node`. */
export async function nodeVersion(node: string): Promise<string> {
  return (await run(node, ['-p', 'process.versions.node'], { timeout: 30_000 })).stdout.trim();
}

/**
 * A Node older than the package supports: Debian's /usr/bin/node where it is one (Node 20 on these
 * machines), else Node 20.19.0 fetched, so the check runs everywhere rather than being skipped.
 */
export async function unsupportedNode(): Promise<{ node: string; version: string }> {
  const debian = '/usr/bin/node';
  if (existsSync(debian)) {
    const version = await nodeVersion(debian);
    if (versionBelow(version, lowestSupportedNode())) return { node: debian, version };
  }
  const node = await fetchedNode('20.19.0');
  return { node, version: await nodeVersion(node) };
}
