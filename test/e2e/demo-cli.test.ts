// `npm run demo` as a person runs it: demo/main.ts in its own process with no OBV_* settings, printing
// the one URL to open, serving the checkout there, and stopping cleanly on SIGTERM (Ctrl+C).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The demo builds the element with Vite before it listens: generous for a loaded CI machine. */
const START_TIMEOUT_MS = 90_000;

/** Resolves with everything the demo printed once it printed `Press Ctrl+C`, its last start-up line. */
function waitForBanner(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => reject(new Error(`the demo printed no URL within ${START_TIMEOUT_MS} ms:\n${output}`)),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Press Ctrl+C')) {
        clearTimeout(timer);
        resolve(output);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the demo exited (${code}) before it was ready:\n${output}`));
    });
  });
}

function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('npm run demo', () => {
  it(
    'starts with no configuration, prints one URL that serves the checkout, and stops on SIGTERM',
    { timeout: START_TIMEOUT_MS + 30_000 },
    async (t) => {
      // Only what any shell has, plus PORT=0 so the test never collides with a demo already on 8080.
      const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? REPO_ROOT, PORT: '0' };
      const child = spawn(process.execPath, ['--import', 'tsx', 'demo/main.ts'], {
        cwd: REPO_ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      t.after(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });

      const output = await waitForBanner(child);
      const urls = output.match(/https?:\/\/\S+/g) ?? [];
      assert.equal(urls.length, 1, `one URL to open, got: ${output}`);
      const url = urls[0] ?? '';
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);

      const response = await fetch(url);
      assert.equal(response.status, 200);
      const html = await response.text();
      assert.match(html, /<obv-link-account\b/);
      assert.match(html, /Order summary/);

      child.kill('SIGTERM');
      assert.equal(await exitCode(child), 0);
    },
  );
});
