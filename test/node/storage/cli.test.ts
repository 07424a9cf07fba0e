// The storage's side of `npx obv-link-proxy` (proxy/cli.ts), run as processes the way an operator runs
// them: `backup <file>` and what it says, and a start refused for a cause the operator fixes — each one
// line on stderr naming the cause and the fix, exit code 1, no stack.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DatabaseSync } from 'node:sqlite';
import { createLogger } from '../../../proxy/index.ts';
import { createStorage } from '../../../proxy/storage/create-storage.ts';
import { DATABASE_FILE } from '../../../proxy/storage/sqlite/database.ts';
import { PRODUCTION_ENV } from '../../helpers/production-env.ts';

const logger = createLogger('silent');
const dirs: string[] = [];
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'obv-storage-cli-'));
  dirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string>, nodeOptions: string[] = []): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeOptions, '--import', 'tsx', 'proxy/cli.ts', ...args], {
      env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // A start that is not refused runs until stopped: the tests below only start ones that are.
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A data directory with one payment in it. */
async function dataDirWithAPayment(): Promise<string> {
  const dataDir = newDir();
  const storage = createStorage({ kind: 'sqlite', dataDir, logger });
  await storage.removals.record({ merchantUserId: 'u-1', accountId: 'sa_1', removedAt: new Date().toISOString() });
  await storage.close();
  return dataDir;
}

describe('npx obv-link-proxy backup', () => {
  test("writes the copy and says what it wrote; needs none of the proxy's other settings", async () => {
    const dataDir = await dataDirWithAPayment();
    const file = join(newDir(), 'obv-link-backup.sqlite');
    const run = await cli(['backup', file], { OBV_DATA_DIR: dataDir });
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      new RegExp(
        `^backup: wrote ${file} \\(\\d+\\.\\d KB, mode 0600\\): a consistent copy of ${join(dataDir, DATABASE_FILE)}, checked, in \\d+ ms\\n$`,
      ),
    );
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const copy = new DatabaseSync(file, { readOnly: true });
    assert.equal(copy.prepare('SELECT count(*) AS n FROM saved_account_removals').get()?.n, 1);
    copy.close();
  });

  test('an existing file is kept (1) unless --overwrite; a bad command line (2); a proxy on PostgreSQL or Redis (2) — one line each', async () => {
    const dataDir = await dataDirWithAPayment();
    const file = join(newDir(), 'taken.sqlite');
    writeFileSync(file, 'older');
    const kept = await cli(['backup', file], { OBV_DATA_DIR: dataDir });
    assert.deepEqual(
      [kept.code, kept.stdout, kept.stderr],
      [1, '', `backup: ${file} exists: choose a new name, or pass --overwrite (overwrite: true) to replace it.\n`],
    );
    assert.equal(readFileSync(file, 'utf8'), 'older');
    const replaced = await cli(['backup', file, '--overwrite'], { OBV_DATA_DIR: dataDir });
    assert.equal(replaced.code, 0, replaced.stderr);
    assert.match(replaced.stdout, /^backup: wrote /);

    const usage = await cli(['backup'], { OBV_DATA_DIR: dataDir });
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /^backup: name the file to write; usage: obv-link-proxy backup <file> \[--overwrite\]/);
    const unknown = await cli(['backup', file, '--force'], { OBV_DATA_DIR: dataDir });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^backup: unknown option --force; usage:/);
    const redis = await cli(['backup', file], { OBV_REDIS_URL: 'redis://127.0.0.1:9' });
    assert.deepEqual(
      [redis.code, redis.stderr],
      [
        2,
        'backup: this proxy keeps its state in Redis (OBV_REDIS_URL): back up Redis instead (its RDB snapshot or AOF file)\n',
      ],
    );
    const postgres = await cli(['backup', file], { OBV_DATABASE_URL: 'postgres://127.0.0.1:9/shop' });
    assert.deepEqual(
      [postgres.code, postgres.stderr],
      [
        2,
        "backup: this proxy keeps its state in PostgreSQL (OBV_DATABASE_URL): back up the database instead (pg_dump --schema=obv_link, or your provider's point-in-time recovery)\n",
      ],
    );
    const nowhere = join(newDir(), 'nowhere');
    const missing = await cli(['backup', join(newDir(), 'copy.sqlite')], { OBV_DATA_DIR: nowhere });
    assert.deepEqual(
      [missing.code, missing.stderr],
      [
        1,
        `backup: OBV_DATA_DIR ${nowhere} does not exist: set OBV_DATA_DIR to the proxy's data directory (the one it runs with).\n`,
      ],
    );
  });
});

describe('a start refused for a cause the operator fixes', () => {
  /** One line on stderr and exit code 1; nothing on stdout that carries a stack. */
  function assertOneLine(run: Run): string {
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stderr, /^[^\n]+\n$/, `one line: ${run.stderr}`);
    assert.doesNotMatch(run.stdout + run.stderr, /\n\s+at |"stack"/, 'no stack');
    return run.stderr.trim();
  }

  test('a data directory others may write to', async () => {
    const dataDir = newDir();
    chmodSync(dataDir, 0o777);
    const line = assertOneLine(await cli([], { ...PRODUCTION_ENV, OBV_DATA_DIR: dataDir }));
    assert.equal(
      line,
      `OBV_DATA_DIR ${dataDir} is writable by its group and every user (mode 0777); it holds sealed credentials and payments: chmod 700 ${dataDir}.`,
    );
  });

  test('a data directory another proxy runs on', async () => {
    const dataDir = newDir();
    const running = createStorage({ kind: 'sqlite', dataDir, logger });
    try {
      const line = assertOneLine(await cli([], { ...PRODUCTION_ENV, OBV_DATA_DIR: dataDir }));
      assert.match(line, new RegExp(`^OBV_DATA_DIR ${dataDir} is in use by another obv-link proxy\\. .*OBV_REDIS_URL`));
    } finally {
      await running.close();
    }
  });

  test('a damaged database', async () => {
    const dataDir = newDir();
    writeFileSync(join(dataDir, DATABASE_FILE), Buffer.alloc(4096, 1));
    const line = assertOneLine(await cli([], { ...PRODUCTION_ENV, OBV_DATA_DIR: dataDir }));
    assert.match(
      line,
      /obv-link\.sqlite is damaged \(file is not a database\)\. Stop here and restore the last backup/,
    );
  });

  test('a Node without node:sqlite (the storage driver cannot load): what is wrong and what to do, not a stack', async () => {
    const line = assertOneLine(
      await cli([], { ...PRODUCTION_ENV, OBV_DATA_DIR: newDir() }, ['--no-experimental-sqlite']),
    );
    assert.match(
      line,
      new RegExp(
        `^obv-link's default storage needs node:sqlite, which this Node ${process.versions.node} does not offer \\(.*\\): ` +
          'remove --no-experimental-sqlite from the command line and NODE_OPTIONS, or use the official Node\\.js build; or keep state in Redis \\(OBV_REDIS_URL\\)\\.$',
      ),
    );
  });
});
