// bin/supported-node.js: the check each bin runs before loading anything, against package.json's
// engines.node. Its reading of the range, on the versions around each floor; and the bins of this checkout
// run by a Node the package does not support (Debian's Node 20 here), which must print one line and exit 1.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { enginesNode, lowestSupportedNode, unsupportedNode } from '../../helpers/node-runtimes.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const run = promisify(execFile);

interface SupportedNode {
  nodeRanges(range: string): { floor: string; sameMajor: boolean }[];
  neededNode(version: string, range: string): string | undefined;
}
// A plain-JavaScript bin module (no declarations): imported by a path TypeScript does not resolve.
const check = (await import(path.join(ROOT, 'bin/supported-node.js'))) as SupportedNode;

test('engines.node is the range the bins understand: 22 from 22.13, 23 from 23.4 (node:sqlite without a flag), every later major', () => {
  assert.equal(enginesNode(), '^22.13.0 || >=23.4.0');
  assert.deepEqual(check.nodeRanges(enginesNode()), [
    { floor: '22.13.0', sameMajor: true },
    { floor: '23.4.0', sameMajor: false },
  ]);
  assert.equal(lowestSupportedNode(), '22.13.0');
  const needed = Object.fromEntries(
    [
      '18.20.8',
      '20.20.2',
      '21.7.3',
      '22.12.0',
      '22.13.0',
      '22.22.2',
      '23.0.0',
      '23.3.0',
      '23.4.0',
      '24.22.3',
      '26.1.0',
    ].map((version) => [version, check.neededNode(version, enginesNode()) ?? 'supported']),
  );
  assert.deepEqual(needed, {
    '18.20.8': '22.13.0',
    '20.20.2': '22.13.0',
    '21.7.3': '22.13.0',
    '22.12.0': '22.13.0',
    '22.13.0': 'supported',
    '22.22.2': 'supported',
    '23.0.0': '23.4.0',
    '23.3.0': '23.4.0',
    '23.4.0': 'supported',
    '24.22.3': 'supported',
    '26.1.0': 'supported',
  });
});

test('a range in another form is refused, not read wrongly', () => {
  for (const range of ['>=22.13', '22.x', '>=22.13.0 <25', '~22.13.0']) {
    assert.throws(() => check.nodeRanges(range), /does not understand engines\.node/, range);
  }
});

test('the bins of this checkout, on a Node the package does not support: one line naming both versions and what to do, exit 1', async () => {
  const { node, version } = await unsupportedNode();
  for (const name of ['obv-link-proxy', 'obv-link-sandbox']) {
    const outcome = await run(node, [path.join(ROOT, 'bin', `${name}.js`)], { cwd: ROOT, timeout: 30_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({
        code: error.code,
        stdout: error.stdout,
        stderr: error.stderr,
      }),
    );
    assert.deepEqual(outcome, {
      code: 1,
      stdout: '',
      stderr: `${name} needs Node.js 22.13.0 or later; this is Node.js ${version}. Install Node.js 24 LTS (https://nodejs.org/) and run it again.\n`,
    });
  }
});
