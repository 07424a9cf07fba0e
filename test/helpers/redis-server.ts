// Starts a real, throw-away redis-server for a test: loopback only, a free port, its own temp directory,
// persistence only when a test asks for it. Outside CI a missing binary skips the Redis suites with a
// loud message; with CI=true it fails them, so CI can never pass without having run them.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.ts';

const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';
const START_TIMEOUT_MS = 10_000;

function findRedisServer(): boolean {
  const probe = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' });
  return probe.status === 0;
}

/**
 * `false` when redis-server is available, else the reason to skip (pass it as `describe`'s `skip`).
 * @throws Error with CI=true when redis-server is missing: CI must run these suites.
 */
export function redisSkipReason(): string | false {
  if (findRedisServer()) return false;
  const message = `redis-server not found (tried "${REDIS_SERVER}"; set REDIS_SERVER or apt-get install redis-server)`;
  if (process.env.CI === 'true') throw new Error(`${message} — required when CI=true`);
  console.error(`\n${'!'.repeat(78)}\n!!! SKIPPING the Redis tests: ${message}\n${'!'.repeat(78)}\n`);
  return `SKIPPED: ${message}`;
}

export interface RedisServerOptions {
  /** Append-only file on (`appendfsync always`), so data survives a stop and start. Default off. */
  persistent?: boolean;
  /** More command-line settings, e.g. `['--rename-command', 'CONFIG', '']` (a managed Redis that forbids CONFIG). */
  args?: string[];
}

export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:{port}` */
  readonly url: string;
  /** Stops the server: SIGTERM (clean shutdown) or SIGKILL (a crash). Resolves when it has exited. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same port and directory (after `stop`). */
  start(): Promise<void>;
  /** SIGSTOP: the server is frozen (a hung host, a replica that stopped acknowledging) until `resume`. */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
}

/** Starts a redis-server on a free loopback port (tries a few ports if one is taken meanwhile). */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'obv-redis-'));
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    try {
      let child = await spawnRedis(port, dir, options);
      const server: RedisServer = {
        port,
        url: `redis://127.0.0.1:${port}`,
        stop: (signal = 'SIGTERM') => stopProcess(child, signal),
        start: async () => {
          child = await spawnRedis(port, dir, options);
        },
        pause: () => child.kill('SIGSTOP'),
        resume: () => child.kill('SIGCONT'),
        close: async () => {
          child.kill('SIGCONT');
          await stopProcess(child, 'SIGTERM');
          rmSync(dir, { recursive: true, force: true });
        },
      };
      return server;
    } catch (error) {
      lastError = error;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

function spawnRedis(port: number, dir: string, options: RedisServerOptions): Promise<ChildProcess> {
  const persistence = options.persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    ...persistence,
    '--dir',
    dir,
    '--logfile',
    '',
    ...(options.args ?? []),
  ];
  const child = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => fail(new Error(`redis-server did not start in ${START_TIMEOUT_MS} ms:\n${output}`)),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.off('exit', onExit);
        // Keep draining the pipes so a chatty server never blocks on a full one.
        child.stdout?.resume();
        resolve(child);
      }
    };
    const onExit = (code: number | null): void =>
      fail(new Error(`redis-server exited (${code}) on port ${port}:\n${output}`));
    function fail(error: Error): void {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', onExit);
    child.once('error', fail);
  });
}

export interface RedisPair {
  readonly primary: RedisServer;
  readonly replica: RedisServer;
}

/**
 * A primary with persistence and one replica of it (`--replicaof`, its own settings from `replica`),
 * resolved once the replica's link to the primary is up. Either failing to start stops both.
 */
export async function startRedisPair(options: { replica?: RedisServerOptions } = {}): Promise<RedisPair> {
  const primary = await startRedisServer({ persistent: true });
  let replica: RedisServer | undefined;
  try {
    replica = await startRedisServer({
      ...options.replica,
      args: ['--replicaof', '127.0.0.1', String(primary.port), ...(options.replica?.args ?? [])],
    });
    await replicaLinked(replica.url);
    return { primary, replica };
  } catch (error) {
    await replica?.close();
    await primary.close();
    throw error;
  }
}

/**
 * Resolves once the replica at `url` reports its link to its primary up (`master_link_status:up` in INFO
 * replication): it links in the background after it starts, and again after a pause. At most `timeoutMs`.
 */
export async function replicaLinked(url: string, timeoutMs = START_TIMEOUT_MS): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  // The replica may be resuming or restarting under it: the reconnect errors are expected.
  redis.on('error', () => undefined);
  try {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      last = await redis.info('replication').catch((error: unknown) => String(error));
      if (last.includes('master_link_status:up')) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`the replica at ${url} did not link to its primary in ${timeoutMs} ms:\n${last}`);
  } finally {
    redis.disconnect();
  }
}

/** How long a server has to end after its signal before it is killed (a replica may not end on SIGTERM). */
const STOP_GRACE_MS = 5_000;

function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill(signal);
  });
}

export interface RedisSentinel {
  readonly port: number;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
}

/**
 * Starts one Redis Sentinel (`redis-server <conf> --sentinel`) on a free loopback port, monitoring the
 * primary on `primaryPort` as `name` with quorum 1, quick to act: down after `downAfterMs` (default 1 s).
 * One sentinel is enough for a test's failover (it is its own majority), never for production.
 */
export async function startRedisSentinel(
  primaryPort: number,
  name: string,
  downAfterMs = 1_000,
): Promise<RedisSentinel> {
  const dir = mkdtempSync(join(tmpdir(), 'obv-sentinel-'));
  const port = await freePort();
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 1`,
      `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
      `sentinel failover-timeout ${name} 10000`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n'),
  );
  const child = spawn(REDIS_SERVER, [conf, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(
        () => reject(new Error(`redis-sentinel did not start in ${START_TIMEOUT_MS} ms:\n${output}`)),
        START_TIMEOUT_MS,
      );
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (output.includes('+monitor master')) {
          clearTimeout(timer);
          child.stdout?.resume();
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-sentinel exited (${code}):\n${output}`));
      });
    });
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    close: async () => {
      await stopProcess(child, 'SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
