// The package's README holds nothing that exists only in a clone, while the clone's README keeps its two
// set-up commands (one runs the demo, one runs the tests): `npm pack` cuts the README's clone-only blocks
// before packing and puts them back after (scripts/package-readme.ts, prepack/postpack). The packed README
// itself is checked in test/package/installed-package.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { stripCloneOnly } from '../../../scripts/package-readme.ts';
import { cloneOnlyMentions, cloneOnlyOf } from '../../package/markdown-code.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const cloneOnly = cloneOnlyOf(ROOT);

describe("the README's clone-only blocks", () => {
  test('are cut with their markers, and everything else stays', () => {
    const text =
      'A\n\n<!-- clone-only -->\n## From a clone\n\n`npm run demo`\n<!-- /clone-only -->\n\nB <!-- clone-only -->(`.ci/run`)<!-- /clone-only --> C\n';
    assert.equal(stripCloneOnly(text), 'A\n\nB  C\n');
    assert.equal(stripCloneOnly('no block\n'), 'no block\n');
  });

  test('markers that do not pair up stop the pack', () => {
    assert.throws(() => stripCloneOnly('<!-- clone-only -->\nnever closed\n'), /without|not closed/);
    assert.throws(() => stripCloneOnly('x <!-- /clone-only -->\n'), /without its/);
    assert.throws(
      () => stripCloneOnly('<!-- clone-only --> a <!-- clone-only --> b <!-- /clone-only -->\n'),
      /not closed before the next one/,
    );
  });

  test("the clone's README has the two set-up commands: one runs the demo, one runs the tests", () => {
    const setUp =
      /<!-- clone-only -->[\s\S]*?```sh\n([\s\S]*?)```[\s\S]*?<!-- \/clone-only -->/.exec(readme)?.[1] ?? '';
    const commands = setUp
      .split('\n')
      .filter(Boolean)
      .map((line) => line.replace(/\s+#.*$/, ''));
    assert.deepEqual(commands, ['npm install && npm run demo', 'npm test']);
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    assert.match(manifest.scripts.demo ?? '', /demo\/main\.ts/, 'npm run demo runs the demo');
    // `npm test` puts the project's runtime first (scripts/node.sh), then runs the chain of suites.
    assert.match(
      manifest.scripts.test ?? '',
      /^sh scripts\/node\.sh npm run -s test:all$/,
      "npm test runs on the project's runtime",
    );
    assert.match(manifest.scripts['test:all'] ?? '', /test:browser.*test:node/, 'npm test runs the tests');
    assert.match(readFileSync(path.join(ROOT, '.ci/run'), 'utf8'), /\nnpm test\n?$/, 'CI runs that same test command');
  });

  test('the README without them mentions nothing that exists only in a clone (its folders, its npm scripts, the demo)', () => {
    assert.ok(
      cloneOnly.folders.includes('test') && cloneOnly.folders.includes('.ci') && cloneOnly.scripts.includes('provider'),
      JSON.stringify(cloneOnly),
    );
    assert.notDeepEqual(
      cloneOnlyMentions(readme, cloneOnly),
      [],
      'the whole README has a clone-only part (the checker sees it)',
    );
    assert.deepEqual(cloneOnlyMentions(stripCloneOnly(readme), cloneOnly), []);
  });

  test('strip then restore (prepack, postpack) gives the README back byte for byte; an unfinished pack is refused, not overwritten', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'obv-package-readme-'));
    try {
      writeFileSync(path.join(dir, 'README.md'), readme);
      const script = (command: string) =>
        execFileSync(
          process.execPath,
          ['--import', import.meta.resolve('tsx'), path.join(ROOT, 'scripts/package-readme.ts'), command],
          { cwd: dir, encoding: 'utf8', stdio: 'pipe' },
        );
      script('strip');
      assert.equal(readFileSync(path.join(dir, 'README.md'), 'utf8'), stripCloneOnly(readme));
      assert.throws(() => script('strip'), /an earlier pack did not finish/);
      assert.equal(
        readFileSync(path.join(dir, '.readme-clone.md'), 'utf8'),
        readme,
        'the whole README is kept meanwhile',
      );
      script('restore');
      assert.equal(readFileSync(path.join(dir, 'README.md'), 'utf8'), readme);
      assert.equal(existsSync(path.join(dir, '.readme-clone.md')), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
