// `npm run provider` as a process: it reads PROVIDER_* variables, prints its base URL, serves, and stops
// cleanly on SIGTERM; a bad variable stops it at boot with a message naming the variable.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { describe, test } from 'node:test';
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
