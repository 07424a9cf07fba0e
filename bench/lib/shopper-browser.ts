// The shopper's Chromium, for the sections that time what a shopper feels (shopper, returning).
//
// Started by root (CI and these machines run as root), Chromium holds CAP_SYS_NICE and uses it: it raises
// its display threads (the browser's main and IO threads, the compositors, the renderers' IO threads) to
// nice -8, while the renderers' main threads, where the checkout and the element run, stay at 0. A
// shopper's browser runs as an ordinary user, who may not go below nice 0 (setpriority(2)), so all its
// threads are equal. Playwright starts Chromium in a session of its own, which Linux's autogroup schedules
// as one group: root's -8 threads then take the group's CPU from the checkout's main thread, not from the
// demo server. So the bench starts Chromium without CAP_SYS_NICE (util-linux's setpriv), with a shopper's
// priorities; `priorities` says which it got. Measured back to back (2026-11-26, `npm run bench -- --only
// shopper`, 200 flows each): p50 43.1 ms with root's priorities, 37.5 ms with a user's; the p99 moved
// with the machine's noise either way (99.6 and 118.4 ms).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../../scripts/chromium.ts';

export interface ShopperBrowser {
  browser: Browser;
  /** Whether Chromium runs with a user's thread priorities (not root's raised ones). */
  asUser: boolean;
  /** How it was started, for results.json. */
  priorities: string;
}

let wrapper: string | undefined;

/** An executable that starts Chromium without CAP_SYS_NICE; undefined when setpriv is not there. */
function chromiumWithoutSysNice(): string | undefined {
  if (wrapper) return wrapper;
  try {
    execFileSync('setpriv', ['--bounding-set', '-sys_nice', '--', 'true'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  // Playwright takes an executable, not a command line: a two-line script passes the arguments on.
  wrapper = join(mkdtempSync(join(tmpdir(), 'obv-link-bench-chromium-')), 'chromium');
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexec setpriv --bounding-set -sys_nice -- '${chromiumPath().replaceAll("'", "'\\''")}' "$@"\n`,
    { mode: 0o755 },
  );
  return wrapper;
}

/** Launches headless Chromium as a shopper's would run: with a user's thread priorities where it can. */
export async function launchShopperBrowser(): Promise<ShopperBrowser> {
  const root = process.getuid?.() === 0;
  const executablePath = root ? chromiumWithoutSysNice() : chromiumPath();
  const browser = await chromium.launch({
    executablePath: executablePath ?? chromiumPath(),
    args: CHROMIUM_ARGS,
    headless: true,
  });
  if (root && !executablePath) {
    console.error(
      "bench: setpriv not found: Chromium runs with root's raised thread priorities, unlike a shopper's (see bench/lib/shopper-browser.ts)",
    );
  }
  const asUser = !root || executablePath !== undefined;
  return {
    browser,
    asUser,
    priorities: !root
      ? "a user's (not root)"
      : asUser
        ? "a user's (root without CAP_SYS_NICE, setpriv)"
        : "root's (display threads at nice -8)",
  };
}
