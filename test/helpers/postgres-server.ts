// Starts a real, throw-away PostgreSQL cluster for a test, from the machine's PostgreSQL binaries
// (Debian's `postgresql` package: /usr/lib/postgresql/<version>/bin): a copy of an `initdb` (made once
// per machine) in its own temp directory, `postgres` on a free loopback port, no Unix socket, trust
// authentication (loopback only).
// PostgreSQL refuses to run as root, and CI runs as root: then the cluster's files and processes belong
// to the `postgres` user the package creates (or `nobody`), set on the child processes themselves
// (child_process's uid/gid), so no su, runuser or sudo is needed. Outside CI a missing PostgreSQL skips
// the suites with a loud message; with CI=true it fails them, so CI can never pass without having run
// them (as redis-server.ts does for Redis).
//
// For the failover rehearsal a cluster can be a primary that waits for a synchronous standby
// (`synchronous_standby_names`, `synchronous_commit = on`), and `startStandby` makes that standby with
// `pg_basebackup -R` and promotes it when asked.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

const START_TIMEOUT_MS = 30_000;

/** The directory holding initdb, postgres, pg_ctl and pg_basebackup: PG_BIN, or the newest Debian version. */
function findBinDir(): string | undefined {
  if (process.env.PG_BIN) return existsSync(join(process.env.PG_BIN, 'postgres')) ? process.env.PG_BIN : undefined;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      const dir = join(root, version, 'bin');
      if (existsSync(join(dir, 'postgres')) && existsSync(join(dir, 'initdb'))) return dir;
    }
  }
  const probe = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const dir = probe.status === 0 ? probe.stdout.trim() : '';
  return dir && existsSync(join(dir, 'postgres')) ? dir : undefined;
}

/**
 * `false` when PostgreSQL is available, else the reason to skip (pass it as `describe`'s `skip`).
 * @throws Error with CI=true when PostgreSQL is missing: CI must run these suites.
 */
export function postgresSkipReason(): string | false {
  if (findBinDir()) return false;
  const message =
    'PostgreSQL not found (looked in PG_BIN, /usr/lib/postgresql/*/bin and pg_config; apt-get install postgresql)';
  if (process.env.CI === 'true') throw new Error(`${message} — required when CI=true`);
  console.error(`\n${'!'.repeat(78)}\n!!! SKIPPING the PostgreSQL tests: ${message}\n${'!'.repeat(78)}\n`);
  return `SKIPPED: ${message}`;
}

/** Who the cluster runs as: this process's user, or (as root, which PostgreSQL refuses) an unprivileged one. */
function clusterUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    const probe = spawnSync('id', ['-u', name], { encoding: 'utf8' });
    const group = spawnSync('id', ['-g', name], { encoding: 'utf8' });
    if (probe.status === 0 && group.status === 0)
      return { uid: Number(probe.stdout.trim()), gid: Number(group.stdout.trim()) };
  }
  throw new Error('running as root and neither a postgres nor a nobody user exists to run PostgreSQL as');
}

export interface PostgresServerOptions {
  /** Settings given to `postgres -c` (e.g. `{ synchronous_commit: 'on' }`). */
  settings?: Record<string, string>;
  /**
   * A primary for a synchronous standby named this (`synchronous_standby_names`): commits wait until the
   * standby has flushed them. Replication from loopback is allowed either way.
   */
  synchronousStandby?: string;
}

export interface PostgresServer {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:{port}/postgres` */
  readonly url: string;
  /** The cluster's data directory. */
  readonly dataDir: string;
  /** A URL for database `name` on this server. */
  urlFor(database: string): string;
  /** Runs one SQL statement through psql as the superuser; resolves to its output (unaligned, tuples only). */
  sql(statement: string, database?: string): Promise<string>;
  /**
   * Stops the server: SIGINT (PostgreSQL's fast shutdown) or SIGKILL to every process of the cluster (a
   * crash: a restart replays the WAL). Resolves when every process has exited.
   */
  stop(signal?: 'SIGINT' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same port and directory (after `stop`). */
  start(): Promise<void>;
  /** Whether it is running. */
  readonly running: boolean;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
}

export interface PostgresStandby extends PostgresServer {
  /** Promotes the standby to a primary (`pg_ctl promote`, waiting until it takes writes). */
  promote(): Promise<void>;
}

interface Cluster {
  bin: string;
  user: { uid: number; gid: number } | undefined;
  root: string;
  dataDir: string;
  port: number;
  settings: Record<string, string>;
}

/** Starts a PostgreSQL cluster on a free loopback port (tries a few ports if one is taken meanwhile). */
export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const bin = findBinDir();
  if (!bin) throw new Error('PostgreSQL not found (postgresSkipReason says why)');
  const user = clusterUser();
  const root = privateDir(user);
  const dataDir = join(root, 'data');
  await copyTemplate(bin, user, dataDir);
  const settings = {
    ...(options.synchronousStandby
      ? { synchronous_standby_names: `FIRST 1 (${options.synchronousStandby})`, synchronous_commit: 'on' }
      : {}),
    ...options.settings,
  };
  return startCluster({ bin, user, root, dataDir, port: 0, settings });
}

/**
 * A standby of `primary` named `name` (its `application_name`, which the primary's
 * `synchronous_standby_names` lists): a base backup with `-R` (standby.signal and primary_conninfo),
 * started on a port of its own, streaming from the primary.
 */
export async function startStandby(primary: PostgresServer, name: string): Promise<PostgresStandby> {
  const bin = findBinDir()!;
  const user = clusterUser();
  const root = privateDir(user);
  const dataDir = join(root, 'data');
  await run(bin, user, 'pg_basebackup', [
    '-D',
    dataDir,
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-X',
    'stream',
    '-R',
    '-d',
    `application_name=${name}`,
    '--no-sync',
  ]);
  const server = await startCluster({ bin, user, root, dataDir, port: 0, settings: {} });
  return {
    ...server,
    get running() {
      return server.running;
    },
    stop: server.stop,
    start: server.start,
    close: server.close,
    async promote() {
      await run(bin, user, 'pg_ctl', ['promote', '-D', dataDir, '-w', '-t', '30']);
    },
  };
}

/**
 * A fresh, never-started cluster in `dataDir`: a copy of one `initdb` made once per machine, user and
 * PostgreSQL build (initdb takes seconds; a copy of its ~40 MB a fraction of that). The template is made
 * in a directory of its own and renamed into place, so test processes starting at once never see half of
 * one; a copy is the cluster's user's, made by that user.
 */
async function copyTemplate(bin: string, user: Cluster['user'], dataDir: string): Promise<void> {
  const version = spawnSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout.trim();
  const key = createHash('sha256')
    .update(`${bin}\n${version}\n${user?.uid ?? process.getuid?.()}`)
    .digest('hex')
    .slice(0, 12);
  const template = join(tmpdir(), `obv-postgres-template-${key}`);
  if (!existsSync(join(template, 'PG_VERSION'))) {
    const making = privateDir(user);
    await run(bin, user, 'initdb', [
      '-D',
      join(making, 'data'),
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
      '--no-instructions',
    ]);
    try {
      renameSync(join(making, 'data'), template);
    } catch {
      // Another process made it first: theirs is as good.
    }
    rmSync(making, { recursive: true, force: true });
  }
  await runCommand('cp', ['-a', template, dataDir], user);
}

function privateDir(user: Cluster['user']): string {
  const root = mkdtempSync(join(tmpdir(), 'obv-postgres-'));
  chmodSync(root, 0o700);
  if (user) chownSync(root, user.uid, user.gid);
  return root;
}

async function startCluster(cluster: Cluster): Promise<PostgresServer> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    try {
      let child: ChildProcess | undefined = await spawnPostgres({ ...cluster, port });
      const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
      const server: PostgresServer = {
        port,
        url: url('postgres'),
        dataDir: cluster.dataDir,
        urlFor: url,
        sql: (statement, database = 'postgres') =>
          run(cluster.bin, cluster.user, 'psql', [
            '-X',
            '-q',
            '-A',
            '-t',
            '-v',
            'ON_ERROR_STOP=1',
            '-h',
            '127.0.0.1',
            '-p',
            String(port),
            '-U',
            'postgres',
            '-d',
            database,
            '-c',
            statement,
          ]),
        get running() {
          return child !== undefined;
        },
        stop: async (signal = 'SIGINT') => {
          const stopping = child;
          child = undefined;
          if (stopping) await stopProcessGroup(stopping, signal);
        },
        start: async () => {
          if (!child) child = await spawnPostgres({ ...cluster, port });
        },
        close: async () => {
          const stopping = child;
          child = undefined;
          if (stopping) await stopProcessGroup(stopping, 'SIGINT');
          rmSync(cluster.root, { recursive: true, force: true });
        },
      };
      return server;
    } catch (error) {
      lastError = error;
    }
  }
  rmSync(cluster.root, { recursive: true, force: true });
  throw lastError;
}

function spawnPostgres(cluster: Cluster): Promise<ChildProcess> {
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    port: String(cluster.port),
    // No Unix socket: nothing outside the temp directory, and nothing to clash with the packaged server.
    unix_socket_directories: '',
    max_connections: '200',
    shared_buffers: '32MB',
    wal_level: 'replica',
    max_wal_senders: '5',
    // A SIGKILLed cluster's restart replays this much WAL at most: keeps crash restarts quick.
    max_wal_size: '256MB',
    logging_collector: 'off',
    log_min_messages: 'warning',
    ...cluster.settings,
  };
  const args = [
    '-D',
    cluster.dataDir,
    ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
  ];
  // Its own process group (detached): a SIGKILL "crash" reaches the postmaster and every backend at once.
  const child = spawn(join(cluster.bin, 'postgres'), args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    ...(cluster.user ? { uid: cluster.user.uid, gid: cluster.user.gid } : {}),
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => fail(new Error(`postgres did not start in ${START_TIMEOUT_MS} ms:\n${output}`)),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('database system is ready to accept')) {
        clearTimeout(timer);
        child.off('exit', onExit);
        // Keep draining the pipes so a chatty server never blocks on a full one.
        child.stdout?.resume();
        child.stderr?.removeAllListeners('data');
        child.stderr?.resume();
        resolve(child);
      }
    };
    const onExit = (code: number | null): void =>
      fail(new Error(`postgres exited (${code}) on port ${cluster.port}:\n${output}`));
    function fail(error: Error): void {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
      reject(error);
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', fail);
  });
}

/** Signals the cluster's process group and waits until the postmaster and (after a SIGKILL) its backends are gone. */
async function stopProcessGroup(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const pid = child.pid!;
  const exited =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killGroup = () => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  try {
    if (signal === 'SIGKILL') killGroup();
    else process.kill(pid, signal);
  } catch {
    // Already gone.
  }
  // A smart shutdown (SIGTERM) waits for every client: one a test left open must not hang the suite.
  const fallback = setTimeout(killGroup, 10_000);
  await exited;
  clearTimeout(fallback);
  // The backends of a killed postmaster may outlive it by a moment; the next start needs them gone.
  for (let waited = 0; waited < 10_000 && groupAlive(pid); waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs one of the cluster's tools as its user; resolves to stdout, rejects with stderr. */
function run(bin: string, user: Cluster['user'], tool: string, args: string[]): Promise<string> {
  return runCommand(join(bin, tool), args, user);
}

function runCommand(command: string, args: string[], user: Cluster['user']): Promise<string> {
  const tool = command.split('/').at(-1)!;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Tools look for their home and locale; a root HOME is unreadable for the cluster's user.
      env: { ...process.env, HOME: tmpdir(), LC_ALL: 'C', PGCONNECT_TIMEOUT: '5' },
      cwd: tmpdir(),
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(stdout.trim()) : reject(new Error(`${tool} exited ${code}: ${stderr.trim()}`)),
    );
  });
}
