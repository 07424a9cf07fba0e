// Shared steps of the installed-package tests: pack this checkout once (`npm pack`, which runs the
// `prepack` build; later test files reuse that tarball while the checkout is unchanged), make throw-away apps in temp folders that install the tarball with npm as a merchant
// runs it (npm 12, its default settings; versions pinned to this project's lockfile, so the npm cache
// already holds them), and run their commands as child processes with bounded time.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
export { freePort } from '../helpers/free-port.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const FIXTURES = path.join(import.meta.dirname, 'fixtures');

const run = promisify(execFile);

/** Runs `command` in `cwd`; rejects with its output when it fails or outlives `timeoutMs`. */
export async function exec(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs = 180_000,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, env, timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024 });
    return `${stdout}${stderr}`;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`, { cause: error });
  }
}

/**
 * What `npm pack` would pack, as one hash: the commit, the tracked files' changes and the untracked ones
 * (their names and contents). Undefined outside a git checkout (then nothing is cached).
 */
async function checkoutHash(): Promise<string | undefined> {
  try {
    const hash = createHash('sha256');
    hash.update(await exec('git', ['rev-parse', 'HEAD'], ROOT));
    hash.update(await exec('git', ['diff', 'HEAD', '--binary'], ROOT));
    const untracked = (await exec('git', ['ls-files', '--others', '--exclude-standard', '-z'], ROOT)).split('\0');
    for (const file of untracked.filter(Boolean).sort()) {
      hash.update(`\0${file}\0`);
      hash.update(readFileSync(path.join(ROOT, file)));
    }
    return hash.digest('hex').slice(0, 16);
  } catch {
    return undefined;
  }
}

/**
 * `npm pack` of this checkout into `destination`; returns the tarball's path. The package test files each
 * need the tarball and run one after the other: the first packs (its `prepack` builds everything), the
 * others copy its tarball while the checkout is unchanged (same hash), which keeps a minute or two of
 * builds out of `npm test`.
 */
export async function packThisCheckout(destination: string): Promise<string> {
  const { name, version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  const file = `${name}-${version}.tgz`;
  const key = await checkoutHash();
  const cached = key && path.join(tmpdir(), `obv-link-tarball-${key}`, file);
  if (cached && existsSync(cached)) {
    copyFileSync(cached, path.join(destination, file));
    return path.join(destination, file);
  }
  await exec('npm', ['pack', '--pack-destination', destination, '--silent'], ROOT, 300_000);
  if (cached && key === (await checkoutHash())) {
    // Written under a temporary name, then renamed: a reader never sees half a tarball.
    mkdirSync(path.dirname(cached), { recursive: true });
    copyFileSync(path.join(destination, file), `${cached}.partial`);
    renameSync(`${cached}.partial`, cached);
  }
  return path.join(destination, file);
}

/** `name@version` as this project's lockfile pins it (so the install is served from the npm cache). */
export function pinned(name: string): string {
  const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  const version = lock.packages[`node_modules/${name}`]?.version;
  assert.ok(version, `package-lock.json pins ${name}`);
  return `${name}@${version}`;
}

/** What one `npm install` did. */
export interface InstallReport {
  /** What npm printed (stdout and stderr). */
  output: string;
  /** The packages (`name@version`) whose install scripts npm blocked, as its warning names them. */
  blocked: string[];
}

/**
 * Bounds one `npm install` of the tarball with a few packages. The tree is plain JavaScript (nothing
 * compiles since the native SQLite module is gone): 10–30 s from the npm cache here, up to about a
 * minute on a loaded machine or with a cold cache.
 */
const INSTALL_TIMEOUT_MS = 180_000;

export interface TempApp {
  dir: string;
  /**
   * `npm install` of the tarball and `packages` into the app, with npm's default settings: the environment
   * of a shell (no npm_config_* of the npm running these tests: `npm run -s` would silence npm's warnings)
   * and no flag but `extraArgs`, `--prefer-offline` (the cache holds the pinned versions) and
   * `--no-audit --no-fund` (no registry audit, no funding notice).
   */
  install(packages: string[], extraArgs?: string[]): Promise<InstallReport>;
  write(file: string, text: string): void;
  remove(): void;
}

/** An empty ES-module app in a temp folder (removed by `remove`). */
export function tempApp(prefix: string, tarball: string): TempApp {
  const dir = mkdtempSync(path.join(tmpdir(), `obv-link-${prefix}-`));
  writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name: `${prefix}-app`, private: true, type: 'module' }, null, 2)}\n`,
  );
  return {
    dir,
    async install(packages, extraArgs = []) {
      const output = await exec(
        'npm',
        ['install', tarball, ...packages, '--prefer-offline', '--no-audit', '--no-fund', ...extraArgs],
        dir,
        INSTALL_TIMEOUT_MS,
        cleanEnv(),
      );
      return { output, blocked: blockedInstallScripts(output) };
    },
    write(file, text) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const BLOCKED_HEADER =
  /^npm warn install-scripts (\d+) packages? had install scripts blocked because they are not covered by allowScripts:$/m;

/**
 * The packages npm 12 names in its warning "N packages had install scripts blocked because they are not
 * covered by allowScripts", one `  name@version (event: command)` line each. A warning whose lines do
 * not parse fails here rather than reading as "nothing blocked".
 */
export function blockedInstallScripts(output: string): string[] {
  const header = BLOCKED_HEADER.exec(output);
  if (!header) return [];
  const lines = output
    .slice(header.index + header[0].length)
    .split('\n')
    .slice(1);
  const blocked: string[] = [];
  for (const line of lines) {
    const named = /^npm warn install-scripts {3}(\S+@[^@\s]+) \(/.exec(line);
    if (!named) break;
    blocked.push(named[1]!);
  }
  assert.equal(blocked.length, Number(header[1]), `npm's warning names each blocked package:\n${output}`);
  return blocked.sort();
}

/** Runs npm in `app` with a shell's environment; its stdout, also when it exits 1 (`npm ls` finding nothing does). */
async function npmIn(app: TempApp, args: string[]): Promise<string> {
  try {
    return (await run('npm', args, { cwd: app.dir, env: cleanEnv(), timeout: 60_000, maxBuffer: 32 * 1024 * 1024 }))
      .stdout;
  } catch (error) {
    const { code, stdout = '', stderr = '' } = error as { code?: unknown; stdout?: string; stderr?: string };
    if (code === 1 && stdout) return stdout;
    throw new Error(`npm ${args.join(' ')} failed in ${app.dir}:\n${stdout}\n${stderr}`, { cause: error });
  }
}

/**
 * obv-link and everything it pulls in, however deep (`name@version`), from npm's own dependency graph
 * (`npm query`): what a merchant gets by installing the package, as opposed to what the app installs
 * beside it (express, or the bundler and compilers of the framework apps).
 */
export async function packageTree(app: TempApp): Promise<Set<string>> {
  const nodes = JSON.parse(await npmIn(app, ['query', '#obv-link, #obv-link *'])) as {
    name: string;
    version: string;
  }[];
  assert.ok(
    nodes.some((node) => node.name === 'obv-link'),
    'npm query finds obv-link in the app',
  );
  return new Set(nodes.map((node) => `${node.name}@${node.version}`));
}

/** The packages whose install scripts wait for an approval (`npm install-scripts ls`), `name@version`. */
export async function pendingInstallScripts(app: TempApp): Promise<string[]> {
  const { allowScripts } = JSON.parse(await npmIn(app, ['install-scripts', 'ls', '--json'])) as {
    allowScripts: { changes: { key: string; change: string }[] }[];
  };
  return allowScripts
    .flatMap(({ changes }) => changes.filter(({ change }) => change === 'pending').map(({ key }) => key))
    .sort();
}

/** Whether `npm ls <name>` finds the package anywhere in the app's tree. */
export async function npmLsFinds(app: TempApp, name: string): Promise<boolean> {
  const tree = JSON.parse(await npmIn(app, ['ls', name, '--all', '--json'])) as { dependencies?: object };
  return tree.dependencies !== undefined && Object.keys(tree.dependencies).length > 0;
}

/**
 * The install-script policy of the npm that installs the apps: npm 12 or later (it blocks a dependency's
 * install script unless the app approves it) with nothing set that runs or skips scripts wholesale.
 */
export async function npmScriptPolicy(app: TempApp): Promise<{ npm: string; settings: string }> {
  const npm = (await npmIn(app, ['--version'])).trim();
  const settings = (
    await npmIn(app, ['config', 'get', 'ignore-scripts', 'allow-scripts', 'dangerously-allow-all-scripts'])
  ).trim();
  return { npm, settings };
}

/** Copies the fixture folder `name` (test/package/fixtures/<name>) into `app`. */
export function copyFixture(app: TempApp, name: string): void {
  cpSync(path.join(FIXTURES, name), app.dir, { recursive: true });
}

/** A child process with its output collected, for boot checks and clean-exit checks. */
export interface Child {
  process: ChildProcess;
  /** stdout and stderr, as they came. */
  output(): string;
  /** stderr alone (what Node's own warnings write to). */
  errors(): string;
  /** Resolves when the output matches `pattern` (bounded); rejects with the output otherwise. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code (or signal name) once the process ended (bounded). */
  exited(timeoutMs?: number): Promise<number | string>;
  /** Ends the process if still running (test clean-up). */
  kill(): void;
}

/** `group`: the child leads a process group of its own, so a signal can reach the group as a terminal's Ctrl-C does. */
export function startChild(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; group?: boolean },
): Child {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.group ?? false,
  });
  let text = '';
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    errors += chunk.toString();
  });
  const exit = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return {
    process: child,
    output: () => text,
    errors: () => errors,
    async waitFor(pattern, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(text);
        if (match) return match;
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`no ${pattern} in the output of ${command} ${args.join(' ')}:\n${text}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async exited(timeoutMs = 15_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${command} did not exit within ${timeoutMs} ms:\n${text}`)),
          timeoutMs,
        );
      });
      try {
        return await Promise.race([exit, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** The installed bin's path: what `npx <name>` runs (node, through the file's shebang). */
export function bin(app: TempApp, name: string): string {
  return path.join(app.dir, 'node_modules/.bin', name);
}

/** Polls `url` until it answers 200 (bounded), failing with the server's output otherwise. */
export async function waitForHttp(url: string, server: Child, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    if (server.process.exitCode !== null || Date.now() > deadline)
      throw new Error(`${url} did not answer:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The first fenced block of `language` after `heading` in the README (fails loudly when missing). */
export function readmeBlock(
  heading: string,
  language: string,
  readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8'),
): string {
  const start = readme.indexOf(heading);
  assert.ok(start >= 0, `README has a "${heading}" section`);
  const code = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(readme.slice(start))?.[1];
  assert.ok(code, `the README's "${heading}" section has a ${language} block`);
  return code;
}

/** An environment without this checkout's npm-script variables, so a child sees only what a shell would. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('npm_') && !key.startsWith('OBV_') && !key.startsWith('PROVIDER_') && key !== 'NODE_OPTIONS')
      env[key] = value;
  }
  return { ...env, ...extra };
}

/** The local addresses a TCP socket listens on at `port` (Linux: /proc/net/tcp and tcp6), e.g. ['127.0.0.1'] or ['0.0.0.0']. */
export function listeningAddresses(port: number): string[] {
  const addresses: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== '0A') continue; // 0A: LISTEN
      const [hex, portHex] = local.split(':');
      if (!hex || Number.parseInt(portHex ?? '', 16) !== port) continue;
      addresses.push(hex.length === 8 ? ipv4(hex) : ipv6(hex));
    }
  }
  return addresses.sort();
}

/** /proc/net's little-endian words as an address. */
function ipv4(hex: string): string {
  return (hex.match(/../g) ?? [])
    .reverse()
    .map((byte) => Number.parseInt(byte, 16))
    .join('.');
}

function ipv6(hex: string): string {
  const bytes = (hex.match(/.{8}/g) ?? []).flatMap((word) => (word.match(/../g) ?? []).reverse());
  const groups = (bytes.join('').match(/.{4}/g) ?? []).map((group) => Number.parseInt(group, 16).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

/** The process ids below `pid` (children, grandchildren…), from `ps`. */
export async function descendants(pid: number): Promise<number[]> {
  const table = (await exec('ps', ['-eo', 'pid=,ppid='], tmpdir()))
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number));
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift();
    for (const [child, ppid] of table) {
      if (ppid === parent && child !== undefined) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

/** Whether process `pid` still runs: it exists and has not ended (an orphan's zombie waits for init to reap it). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** A shell block of the docs running in bash: its background jobs (`&`) are in its process group. */
export interface ShellBlock extends Child {
  /** SIGTERM to the whole group (bash, its jobs, what npx started), then waits for bash to end (bounded). */
  stop(): Promise<void>;
}

/**
 * Runs `block` (a ```sh block of the README or a guide) as written, in bash, in a process group of its own.
 * `replacements` are what a test must change (the package's source, fixed ports): each `search` must be in
 * the block (fails loudly otherwise) and is replaced everywhere.
 */
export function runShellBlock(
  block: string,
  replacements: [search: string, replacement: string][],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): ShellBlock {
  let script = block;
  for (const [search, replacement] of replacements) {
    assert.ok(script.includes(search), `the block contains ${JSON.stringify(search)}:\n${block}`);
    script = script.replaceAll(search, replacement);
  }
  const child = startChild('bash', ['-e', '-c', script], { ...options, group: true });
  return {
    ...child,
    async stop() {
      try {
        process.kill(-child.process.pid!, 'SIGTERM');
      } catch {
        // the group has ended already
      }
      await child.exited().catch(() => undefined);
      try {
        process.kill(-child.process.pid!, 'SIGKILL');
      } catch {
        // nothing left in the group
      }
    },
  };
}
