// `npm start` and `npm run demo` under a process manager: it signals the npm process, and npm (12, as 11)
// passes the signal only to its own child. Whatever npm runs must then stop: the port closes and no
// process of the group is left behind (a tsx wrapper or a shell in between used to keep the server
// running). The scripts read `exec sh scripts/node.sh node …`: npm's shell execs scripts/node.sh, which
// picks the runtime and execs node, so npm's child is node itself.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { freePort } from '../helpers/free-port.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The demo builds the element with Vite before it listens: generous for a loaded machine. */
const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 20_000;

/** Live processes whose process group is `group` (Linux /proc; zombies count as gone). */
function processesInGroup(group: number): { pid: number; command: string }[] {
  const found: { pid: number; command: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command (which is in parentheses and may hold spaces): state ppid pgrp …
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === group && state !== 'Z') {
        found.push({
          pid: Number(entry),
          command: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim(),
        });
      }
    } catch {
      // The process ended while being read.
    }
  }
  return found;
}

/** The parent process id of `pid` (Linux /proc). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Polls `check` until it is true or `timeoutMs` passed; returns its last answer. */
async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs `npm run <script>` as the leader of its own process group, as a process manager would. */
function npmRun(script: string, env: Record<string, string>): { npm: ChildProcess; output: () => string } {
  const npm = spawn('npm', ['run', '--silent', script], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? REPO_ROOT, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  npm.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { npm, output: () => output };
}

async function signalNpmAndExpectEverythingGone(
  script: string,
  env: Record<string, string>,
  port: number,
  ready: RegExp,
  signal: 'SIGTERM' | 'SIGINT' = 'SIGTERM',
): Promise<void> {
  const { npm, output } = npmRun(script, env);
  const group = npm.pid as number;
  try {
    assert.ok(
      await eventually(() => ready.test(output()) || npm.exitCode !== null, START_TIMEOUT_MS),
      `npm run ${script} did not start:\n${output()}`,
    );
    assert.ok(await portAnswers(port), `npm run ${script} listens on ${port}:\n${output()}`);
    const running = processesInGroup(group);
    assert.ok(running.length >= 2, 'npm and what it runs are in the group');
    assert.deepEqual(
      running.filter(({ command }) => /^(\S*\/)?(ba|da)?sh /.test(command)),
      [],
      `no shell between npm and node: ${JSON.stringify(running)}`,
    );
    assert.ok(
      running.some(({ pid, command }) => /^(\S*\/)?node /.test(command) && parentOf(pid) === npm.pid),
      `npm's child is node: ${JSON.stringify(running)}`,
    );

    process.kill(group, signal); // the npm process alone, not its group
    const exited = await eventually(() => npm.exitCode !== null || npm.signalCode !== null, STOP_TIMEOUT_MS);
    assert.ok(exited, `npm itself ended after ${signal}:\n${output()}`);
    assert.ok(
      await eventually(async () => !(await portAnswers(port)), STOP_TIMEOUT_MS),
      `port ${port} still answers after ${signal} to npm`,
    );
    assert.ok(
      await eventually(() => processesInGroup(group).length === 0, STOP_TIMEOUT_MS),
      `left running after ${signal} to npm: ${JSON.stringify(processesInGroup(group))}\n${output()}`,
    );
  } finally {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Nothing left, as it should be.
    }
  }
}

describe('npm scripts end when npm is signalled', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(
      `npm start: the proxy stops and its port closes when the npm process gets ${signal}`,
      { timeout: START_TIMEOUT_MS + 3 * STOP_TIMEOUT_MS },
      async () => {
        const port = await freePort();
        await signalNpmAndExpectEverythingGone(
          'start',
          {
            OBV_SANDBOX: 'true',
            OBV_BASE_URL: 'http://127.0.0.1:9',
            OBV_PUBLIC_URL: `http://127.0.0.1:${port}`,
            PORT: String(port),
            HOST: '127.0.0.1',
            OBV_SHUTDOWN_TIMEOUT: '2s',
            OBV_DRAIN_WINDOW: '1s',
          },
          port,
          /obv-link proxy listening/,
          signal,
        );
      },
    );
  }

  it(
    'npm run demo: the demo stops and its port closes when the npm process gets SIGTERM',
    { timeout: START_TIMEOUT_MS + 3 * STOP_TIMEOUT_MS },
    async () => {
      const port = await freePort();
      await signalNpmAndExpectEverythingGone('demo', { PORT: String(port) }, port, /Press Ctrl\+C/);
    },
  );
});
