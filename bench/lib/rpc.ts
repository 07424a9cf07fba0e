// A tiny request/response protocol over Node's IPC channel, so each server under test (and the pool of
// idle client sockets) can live in its own process: its memory is then measured alone, and its CPU
// is not shared with the load generator's event loop.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface RpcRequest {
  id: number;
  method: string;
  params: unknown;
}
interface RpcResponse {
  id: number;
  result?: unknown;
  error?: string;
}

/** Handlers a child process answers; each receives the params the parent sent. */
export type RpcHandlers = Record<string, (params: never) => unknown>;

/** Where `BENCH_CPU_PROF=1` writes CPU profiles of the measured phases (open them in Chrome DevTools). */
export const PROFILE_DIR = join(tmpdir(), 'obv-link-bench-profiles');

/** Whether this run profiles the servers (BENCH_CPU_PROF=1). */
export const PROFILING = process.env.BENCH_CPU_PROF === '1';

let profiler: Session | undefined;

/**
 * Profiling through the inspector rather than `--cpu-prof`, so a profile covers the measured phase
 * only, not start-up and module loading.
 */
const PROFILE_HANDLERS: RpcHandlers = {
  profileStart: async () => {
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
    await profiler.post('Profiler.start');
  },
  profileStop: async ({ name }: { name: string }) => {
    if (!profiler) throw new Error('profileStop without profileStart');
    const { profile } = await profiler.post('Profiler.stop');
    profiler.disconnect();
    profiler = undefined;
    mkdirSync(PROFILE_DIR, { recursive: true });
    const file = join(PROFILE_DIR, `${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    return file;
  },
};

/**
 * Child side: answers the parent's calls with `handlers` (plus profileStart/profileStop) and exits
 * when the parent goes away (so no bench process outlives an aborted run).
 */
export function serveRpc(ownHandlers: RpcHandlers): void {
  const handlers = { ...PROFILE_HANDLERS, ...ownHandlers };
  if (!process.send) throw new Error('bench child started without an IPC channel: run it through spawnChild()');
  process.on('message', (message: RpcRequest) => {
    const handler = handlers[message.method] as ((params: unknown) => unknown) | undefined;
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown method ${message.method}`);
        return handler(message.params);
      })
      .then(
        (result) => process.send?.({ id: message.id, result } satisfies RpcResponse),
        (error: unknown) =>
          process.send?.({ id: message.id, error: String((error as Error)?.stack ?? error) } satisfies RpcResponse),
      );
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ id: 0, result: 'ready' } satisfies RpcResponse);
}

const live = new Set<ChildProcess>();

/** Kills every child still running: called on the way out, whatever the reason. */
export function killAllChildren(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}

/** Parent side of one child process. */
export class BenchChild {
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  #nextId = 1;
  #exited = false;

  private constructor(
    child: ChildProcess,
    readonly name: string,
  ) {
    this.#child = child;
    child.on('message', (message: RpcResponse) => {
      const waiter = this.#pending.get(message.id);
      if (!waiter) return;
      this.#pending.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(`${name}: ${message.error}`));
      else waiter.resolve(message.result);
    });
    child.on('exit', (code, signal) => {
      this.#exited = true;
      live.delete(child);
      for (const waiter of this.#pending.values())
        waiter.reject(new Error(`${name} exited (code ${code}, signal ${signal})`));
      this.#pending.clear();
    });
  }

  /**
   * Starts `script` (a path relative to bench/children) under tsx with `--expose-gc`, and waits for it
   * to say it is ready.
   */
  static async spawn(
    script: string,
    name: string,
    options: { env?: Record<string, string>; quiet?: boolean } = {},
  ): Promise<BenchChild> {
    const execArgv = ['--import', 'tsx', '--expose-gc'];
    const child = fork(fileURLToPath(new URL(`../children/${script}`, import.meta.url)), [], {
      execArgv,
      env: { ...process.env, ...options.env },
      // `quiet` sends stdout (a server's request logs) to /dev/null; stderr always shows.
      stdio: ['ignore', options.quiet ? 'ignore' : 'inherit', 'inherit', 'ipc'],
    });
    live.add(child);
    const handle = new BenchChild(child, name);
    await handle.#waitFor(0, 60_000, 'start');
    return handle;
  }

  /** Calls `method` in the child; rejects after `timeoutMs` so no step can hang the run. */
  call<T>(method: string, params: unknown = {}, timeoutMs = 120_000): Promise<T> {
    if (this.#exited) return Promise.reject(new Error(`${this.name} has exited`));
    const id = this.#nextId++;
    const reply = this.#waitFor(id, timeoutMs, method);
    this.#child.send({ id, method, params } satisfies RpcRequest);
    return reply as Promise<T>;
  }

  /** Asks the child to exit, then kills it if it lingers. */
  async close(): Promise<void> {
    if (this.#exited) return;
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    this.#child.disconnect();
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  #waitFor(id: number, timeoutMs: number, what: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`${this.name}: ${what} took longer than ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, {
        resolve: (value) => (clearTimeout(timer), resolve(value)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
    });
  }
}
