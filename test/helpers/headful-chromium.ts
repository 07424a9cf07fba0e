// A headful Chromium on a private Xvfb display, driven over CDP without Playwright's focus emulation:
// tabs really go to the front and back (`document.visibilityState` changes), and window.focus(),
// window.close() and opener rules behave as they do for shoppers. Needs Debian's `xvfb` package.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type ConnectOverCDPOptions } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../../scripts/chromium.ts';

const START_TIMEOUT_MS = 20_000;

export interface HeadfulChromium {
  browser: Browser;
  /** The browser's own default context: the one without focus emulation. */
  context: BrowserContext;
  close(): Promise<void>;
}

/** Reads a line that matches `pattern` from a child's stream, or fails after START_TIMEOUT_MS. */
function readMatch(stream: NodeJS.ReadableStream, pattern: RegExp, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new Error(`${what} did not start within ${START_TIMEOUT_MS} ms: ${seen.slice(-500)}`)),
      START_TIMEOUT_MS,
    );
    stream.on('data', (chunk: Buffer) => {
      seen += String(chunk);
      const match = pattern.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
  });
}

/** How long a process has to end after SIGTERM before it is killed: a loaded machine must not hang the suite. */
const STOP_GRACE_MS = 5_000;

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** `promise`, or undefined once `ms` passed: a browser that stopped answering CDP is then killed. */
function within(promise: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

export async function launchHeadfulChromium(): Promise<HeadfulChromium> {
  // -displayfd: Xvfb picks a free display number and writes it to fd 3, so parallel runs never collide.
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1440x1000x24', '-nolisten', 'tcp'], {
    stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
  });
  const profile = await mkdtemp(join(tmpdir(), 'obv-headful-'));
  let browserProcess: ChildProcess | undefined;
  const cleanUp = async () => {
    if (browserProcess) await stop(browserProcess);
    await stop(xvfb);
    await rm(profile, { recursive: true, force: true });
  };
  try {
    const display = await readMatch(xvfb.stdio[3] as NodeJS.ReadableStream, /(\d+)\n/, 'Xvfb');
    browserProcess = spawn(
      chromiumPath(),
      [
        ...CHROMIUM_ARGS,
        '--remote-debugging-port=0',
        `--user-data-dir=${profile}`,
        '--window-size=1280,900',
        '--no-default-browser-check',
        'about:blank',
      ],
      { env: { ...process.env, DISPLAY: `:${display}` }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const endpoint = await readMatch(browserProcess.stderr!, /DevTools listening on (ws:\/\/\S+)/, 'Chromium');
    // noDefaults: the default context keeps the browser's real focus behaviour (no focus emulation).
    // (An option Playwright accepts but does not declare.)
    const browser = await chromium.connectOverCDP(endpoint, { noDefaults: true } as unknown as ConnectOverCDPOptions);
    const context = browser.contexts()[0]!;
    return {
      browser,
      context,
      async close() {
        await within(
          browser.close().catch(() => undefined),
          STOP_GRACE_MS,
        );
        await cleanUp();
      },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
