// The package tests read npm 12's warning about blocked install scripts (test/package/temp-apps.ts) to
// assert that nothing of the package's tree waits for an approval. The reader, on npm 12.2.2's own words.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blockedInstallScripts } from '../../package/temp-apps.ts';

const NOTICE = 'npm warn Unknown user config "nodedir". This will stop working in the next major version of npm.';

test('names each package of the warning, scoped ones too, and nothing when there is no warning', () => {
  const output = [
    NOTICE,
    '',
    'added 3 packages in 4s',
    'npm warn install-scripts 2 packages had install scripts blocked because they are not covered by allowScripts:',
    'npm warn install-scripts   esbuild@0.27.7 (postinstall: node install.js)',
    'npm warn install-scripts   @scope/native-thing@1.2.3-beta.1 (install: node-gyp rebuild; postinstall: node done.js)',
    'npm warn install-scripts',
    'npm warn install-scripts Run `npm install-scripts ls` to review, or `npm install-scripts approve <pkg>` to allow.',
  ].join('\n');
  assert.deepEqual(blockedInstallScripts(output), ['@scope/native-thing@1.2.3-beta.1', 'esbuild@0.27.7']);
  assert.deepEqual(blockedInstallScripts(`${NOTICE}\n\nadded 120 packages in 11s\n`), []);
  const one =
    'npm warn install-scripts 1 package had install scripts blocked because they are not covered by allowScripts:\n' +
    'npm warn install-scripts   better-sqlite3@12.11.1 (install: prebuild-install || node-gyp rebuild --release)\n';
  assert.deepEqual(blockedInstallScripts(one), ['better-sqlite3@12.11.1']);
});

test('a warning whose package lines it cannot read fails instead of reading as "nothing blocked"', () => {
  const reworded =
    'npm warn install-scripts 1 package had install scripts blocked because they are not covered by allowScripts:\n' +
    'npm warn install-scripts - esbuild 0.27.7 wants to run postinstall\n';
  assert.throws(() => blockedInstallScripts(reworded), /names each blocked package/);
});
