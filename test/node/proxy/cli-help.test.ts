// `--help` and `--version` of both bins and of each command: they answer on a machine with nothing
// configured (an empty environment), start nothing (the process exits by itself, at once), and the proxy's
// help lists every setting the schema reads, one line each, with the schema's own default.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { ENV_VARIABLES } from '../../../proxy/config/env.ts';
import { settingDefault } from '../../../proxy/config/settings-help.ts';
import { COMMANDS } from '../../../proxy/cli/usage.ts';
import { ProviderEnv } from '../../../sandbox/env.ts';

const run = promisify(execFile);
const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

/** The bin's output with no setting at all; a server it started would keep the process alive past the time-out. */
async function cli(file: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['--import', 'tsx', file, ...args], {
    env: { PATH: process.env.PATH ?? '' },
    timeout: 30_000,
  });
}

describe('npx obv-link-proxy --help and --version', () => {
  test('lists every command and every setting (one line each, required or its default), with no setting set', async () => {
    const { stdout } = await cli('proxy/cli.ts', ['--help']);
    for (const command of COMMANDS) assert.match(stdout, new RegExp(`^  ${command}\\b`, 'm'), `the command ${command}`);
    for (const name of Object.keys(ENV_VARIABLES) as (keyof typeof ENV_VARIABLES)[]) {
      const lines = stdout.split('\n').filter((line) => line.startsWith(`  ${name} `));
      assert.equal(lines.length, 1, `one line for ${name}`);
      const when = settingDefault(name);
      if (when) assert.ok(lines[0]!.endsWith(`[${when}]`), `${name}: ${lines[0]}`);
    }
    assert.match(stdout, /OBV_CLIENT_SECRET .*\[required\]/);
    assert.match(stdout, /OBV_SESSION_TTL .*\[default 15m\]/);
    assert.match(stdout, /PORT .*\[default 3000\]/);
  });

  test('-h, help, and --help after each command answer too; --version names the package version', async () => {
    assert.equal((await cli('proxy/cli.ts', ['-h'])).stdout, (await cli('proxy/cli.ts', ['help'])).stdout);
    for (const command of COMMANDS) {
      const { stdout } = await cli('proxy/cli.ts', [command, '--help']);
      assert.match(stdout, new RegExp(`^Usage: npx obv-link-proxy ${command}`), command);
    }
    assert.equal((await cli('proxy/cli.ts', ['--version'])).stdout, `obv-link ${VERSION}\n`);
  });

  test('an unknown command is refused with exit code 2, naming --help, and starts nothing', async () => {
    const failed = await cli('proxy/cli.ts', ['stat']).then(
      () => assert.fail('exit 0'),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(failed.code, 2);
    assert.match(failed.stderr, /unknown command "stat"; see npx obv-link-proxy --help/);
  });
});

describe('npx obv-link-sandbox --help and --version', () => {
  test('lists its controls and every PROVIDER_* setting, and points to a section the docs have', async () => {
    const { stdout } = await cli('sandbox/cli.ts', ['--help']);
    for (const name of Object.keys(ProviderEnv.shape)) assert.match(stdout, new RegExp(`^  ${name} `, 'm'), name);
    assert.match(stdout, /\[default 4010\]/);
    // Every file and section the help names exists (it once named a README section that did not).
    const named = [...stdout.matchAll(/(docs\/[A-Z-]+\.md|README(?:\.md)?)(?: "([^"]+)")?/g)];
    assert.ok(named.length > 0, 'the help names where to read more');
    for (const [, name, section] of named) {
      const file = name === 'README' ? 'README.md' : name!;
      assert.ok(existsSync(file), file);
      if (section) assert.match(readFileSync(file, 'utf8'), new RegExp(`^#+ ${section}$`, 'm'), `${file} "${section}"`);
    }
    assert.equal((await cli('sandbox/cli.ts', ['stale', '--help'])).stdout, stdout);
    assert.equal((await cli('sandbox/cli.ts', ['--version'])).stdout, `obv-link ${VERSION}\n`);
  });
});
