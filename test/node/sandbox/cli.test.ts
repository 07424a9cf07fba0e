// `npm run provider` as a process: it reads PROVIDER_* variables, prints its base URL, serves, and stops
// cleanly on SIGTERM; a bad variable stops it at boot with a message naming the variable.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import { startProvider } from '../../../sandbox/index.ts';
import { freePort } from '../../helpers/free-port.ts';
import { requestToken } from './helpers.ts';

const CLI = 'sandbox/cli.ts';

function startCli(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', CLI], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Collects a stream's text; resolves with the first line matching `pattern` (or fails when the stream ends). */
function firstMatch(stream: NodeJS.ReadableStream, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let text = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      const match = pattern.exec(text);
      if (match) resolve(match);
    });
    stream.on('end', () => reject(new Error(`no line matching ${pattern} in: ${text}`)));
  });
}

describe('provider CLI (npm run provider)', () => {
  test('prints its base URL, issues tokens there with the env-configured lifetime, and exits 0 on SIGTERM', async (t) => {
    const child = startCli({ PROVIDER_PORT: '0', PROVIDER_TOKEN_TTL: '42', PROVIDER_LOG_LEVEL: 'silent' });
    t.after(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const stdout = child.stdout;
    assert.ok(stdout);
    const [, url] = await firstMatch(stdout, /listening on (http:\/\/127\.0\.0\.1:\d+)\n/);
    assert.ok(url);
    const response = await requestToken(url);
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { expires_in: number }).expires_in, 42);

    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    assert.equal(code, 0);
  });

  test('refuses to start with an invalid variable, naming it, and exits 1', async () => {
    const child = startCli({ PROVIDER_PORT: '0', PROVIDER_TOKEN_FAILURE_KIND: 'sometimes' });
    const stderr = child.stderr;
    assert.ok(stderr);
    const message = firstMatch(stderr, /PROVIDER_TOKEN_FAILURE_KIND/);
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 1);
    await message;
  });
});

describe('sandbox control subcommands (npx obv-link-sandbox <control>)', () => {
  function runCli(
    args: string[],
    env: Record<string, string> = {},
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
  }

  test('each control reaches the running sandbox and prints what is set; exit 0', async (t) => {
    const provider = await startProvider({ port: 0 });
    t.after(() => provider.close());
    const url = ['--url', provider.url];
    const failNext = await runCli(['fail-next', '--code', 'ACCOUNT_LOCKED', '--count', '2', ...url]);
    assert.equal(failNext.code, 0, failNext.stderr);
    assert.match(failNext.stdout, /fail-next: 2 verifications with ACCOUNT_LOCKED/);
    assert.deepEqual(provider.faults.verificationFailures, {
      count: 2,
      errorCode: 'ACCOUNT_LOCKED',
      errorMessage: 'This account is locked. Contact your bank.',
    });
    assert.equal((await runCli(['delay', '--endpoint', 'transaction', '--ms', '250', ...url])).code, 0);
    assert.equal(provider.faults.transactionDelayMs, 250);
    assert.equal((await runCli(['timeout', '--endpoint', 'verification', ...url])).code, 0);
    assert.equal(provider.faults.endpointTimeouts.verification, 1);
    assert.equal((await runCli(['notify-late', '--ms', '3000', ...url])).code, 0);
    assert.deepEqual(provider.faults.lateNotifications, { count: 1, delayMs: 3000 });
    assert.equal((await runCli(['notify-twice', '--count', '2', ...url])).code, 0);
    assert.equal(provider.faults.duplicateNotifications, 2);
    const stale = await runCli(['stale', ...url]);
    assert.equal(stale.code, 0, stale.stderr);
    assert.match(stale.stdout, /^marked 0 accounts stale$/m);
    const status = await runCli(['status', ...url]);
    assert.match(status.stdout, /delay: verification 0 ms, transaction 250 ms/);
    assert.match(status.stdout, /notify-twice: 2 notifications/);
    const reset = await runCli(['reset', ...url]);
    assert.equal(reset.code, 0);
    assert.match(reset.stdout, /fail-next: off/);
    assert.equal(
      provider.faults.transactionDelayMs +
        provider.faults.duplicateNotifications +
        provider.faults.verificationFailures.count,
      0,
    );
  });

  test('--help prints the controls (exit 0); a usage error says what is wrong (exit 2); a refusal names the field (exit 1)', async (t) => {
    const help = await runCli(['--help']);
    assert.equal(help.code, 0);
    for (const name of ['stale', 'fail-next', 'delay', 'timeout', 'notify-late', 'notify-twice', 'reset', 'status'])
      assert.match(help.stdout, new RegExp(`^  ${name}\\b`, 'm'));
    assert.match((await runCli(['delay', '--help'])).stdout, /Exit codes/);

    const unknown = await runCli(['restart']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "restart"/);
    const missing = await runCli(['fail-next']);
    assert.deepEqual([missing.code, /--code is required/.test(missing.stderr)], [2, true]);
    const wrongOption = await runCli(['reset', '--ms', '5']);
    assert.deepEqual([wrongOption.code, /reset takes no --ms/.test(wrongOption.stderr)], [2, true]);
    const notNumber = await runCli(['notify-late', '--ms', 'soon']);
    assert.deepEqual([notNumber.code, /--ms must be a whole number/.test(notNumber.stderr)], [2, true]);

    const provider = await startProvider({ port: 0 });
    t.after(() => provider.close());
    const refused = await runCli(['timeout', '--endpoint', 'token', '--url', provider.url]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refused \(400\).*\n {2}endpoint: must be "verification"/);
    const notUrl = await runCli(['status', '--url', 'ftp://127.0.0.1:1']);
    assert.deepEqual([notUrl.code, /--url must be an absolute http\(s\) URL/.test(notUrl.stderr)], [2, true]);
    const badSecret = await runCli(['status', '--url', provider.url, '--client-secret', 'nope']);
    assert.deepEqual([badSecret.code, /refused \(401\)/.test(badSecret.stderr)], [1, true]);
  });

  test('no sandbox running: says so and how to start one (exit 1); without --url it asks 127.0.0.1:$PROVIDER_PORT', async () => {
    const port = await freePort();
    const notRunning = await runCli(['status'], { PROVIDER_PORT: String(port) });
    assert.equal(notRunning.code, 1);
    assert.match(
      notRunning.stderr,
      new RegExp(
        `no sandbox answers at http://127\\.0\\.0\\.1:${port} \\(.*\\)\\. Start one with \`npx obv-link-sandbox\``,
      ),
    );
  });
});
