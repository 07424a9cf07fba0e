// Durable by default: where the configuration puts state, what production refuses, and the SQLite file's
// own promises (one proxy per directory while others may read it, private permissions, what a restart keeps).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError, configFromEnv, createLogger, createObvProxy, DataDirectoryError } from '../../../proxy/index.ts';
import { DatabaseSync } from 'node:sqlite';
import { createStorage } from '../../../proxy/storage/create-storage.ts';
import { DATABASE_FILE } from '../../../proxy/storage/sqlite/database.ts';
import { pendingPayment } from '../../helpers/storage-contract.ts';
import { PRODUCTION_ENV } from '../../helpers/production-env.ts';

const PRODUCTION = PRODUCTION_ENV;
const logger = createLogger('silent');
const dirs: string[] = [];
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'obv-durable-'));
  dirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function refusal(env: Record<string, string>): string[] {
  try {
    configFromEnv(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.issues.map((issue) => `${issue.setting}: ${issue.message}`);
  }
  return assert.fail('expected a ConfigError');
}

describe('where state lives', () => {
  test('is SQLite in ./obv-link-data unless told otherwise, and Redis when OBV_REDIS_URL is set', () => {
    const config = configFromEnv(PRODUCTION);
    assert.equal(config.storage, 'sqlite');
    assert.equal(config.dataDir, 'obv-link-data');
    assert.equal(configFromEnv({ ...PRODUCTION, OBV_REDIS_URL: 'redis://:pw@127.0.0.1:6379' }).storage, 'redis');
    assert.equal(configFromEnv({ ...PRODUCTION, OBV_DATA_DIR: '/var/lib/obv-link' }).dataDir, '/var/lib/obv-link');
  });

  test('production refuses memory storage with a clear message, unless told explicitly; sandbox mode takes it', () => {
    const [message] = refusal({ ...PRODUCTION, OBV_STORAGE: 'memory' });
    assert.match(message!, /^OBV_STORAGE: is memory: a restart would lose every payment/);
    assert.match(message!, /OBV_ALLOW_VOLATILE_STORAGE=true/);
    assert.equal(
      configFromEnv({ ...PRODUCTION, OBV_STORAGE: 'memory', OBV_ALLOW_VOLATILE_STORAGE: 'true' }).storage,
      'memory',
    );
    assert.equal(
      configFromEnv({
        OBV_SANDBOX: 'true',
        OBV_BASE_URL: 'http://127.0.0.1:9',
        OBV_PUBLIC_URL: 'http://127.0.0.1:1',
        OBV_STORAGE: 'memory',
      }).storage,
      'memory',
    );
  });

  test('refuses crossed settings, naming each', () => {
    assert.deepEqual(refusal({ ...PRODUCTION, OBV_STORAGE: 'redis' }), [
      'OBV_REDIS_URL: is required with OBV_STORAGE=redis',
    ]);
    assert.match(
      refusal({ ...PRODUCTION, OBV_STORAGE: 'sqlite', OBV_REDIS_URL: 'redis://:pw@127.0.0.1:6379' })[0]!,
      /^OBV_STORAGE: is sqlite while OBV_REDIS_URL is set/,
    );
    assert.match(
      refusal({ ...PRODUCTION, OBV_STORAGE: 'disk' })[0]!,
      /^OBV_STORAGE: must be sqlite, postgres, redis or memory/,
    );
  });

  test('is PostgreSQL when OBV_DATABASE_URL is set, with its pool, time-out and schema; crossed or missing settings are refused', () => {
    const config = configFromEnv({ ...PRODUCTION, OBV_DATABASE_URL: 'postgres://obv:pw@db.internal:5432/shop' });
    assert.equal(config.storage, 'postgres');
    assert.deepEqual(
      [config.databaseSchema, config.databasePoolSize, config.databaseStatementTimeoutMs],
      ['obv_link', 10, 5_000],
    );
    const tuned = configFromEnv({
      ...PRODUCTION,
      OBV_DATABASE_URL: 'postgresql://db/shop',
      OBV_DATABASE_SCHEMA: 'shop_eu',
      OBV_DATABASE_POOL_SIZE: '4',
      OBV_DATABASE_STATEMENT_TIMEOUT: '2s',
    });
    assert.deepEqual(
      [tuned.databaseSchema, tuned.databasePoolSize, tuned.databaseStatementTimeoutMs],
      ['shop_eu', 4, 2_000],
    );
    assert.deepEqual(refusal({ ...PRODUCTION, OBV_STORAGE: 'postgres' }), [
      'OBV_DATABASE_URL: is required with OBV_STORAGE=postgres',
    ]);
    assert.match(
      refusal({ ...PRODUCTION, OBV_DATABASE_URL: 'mysql://db/shop' })[0]!,
      /^OBV_DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/,
    );
    assert.match(
      refusal({ ...PRODUCTION, OBV_DATABASE_URL: 'postgres://db/shop', OBV_DATABASE_SCHEMA: 'Shop-EU' })[0]!,
      /^OBV_DATABASE_SCHEMA: must be a lower-case SQL name/,
    );
    assert.match(
      refusal({
        ...PRODUCTION,
        OBV_DATABASE_URL: 'postgres://db/shop',
        OBV_REDIS_URL: 'redis://:pw@127.0.0.1:6379',
      })[0]!,
      /^OBV_STORAGE: is unset while both OBV_DATABASE_URL and OBV_REDIS_URL are set/,
    );
    assert.match(
      refusal({ ...PRODUCTION, OBV_STORAGE: 'sqlite', OBV_DATABASE_URL: 'postgres://db/shop' })[0]!,
      /^OBV_STORAGE: is sqlite while OBV_DATABASE_URL is set/,
    );
  });

  test('createObvProxy opens its SQLite file in the data directory with no other set-up, private to its user', async () => {
    const dataDir = join(newDir(), 'nested', 'state');
    const proxy = createObvProxy({ ...configFromEnv(PRODUCTION), dataDir, logger });
    try {
      const file = join(dataDir, 'obv-link.sqlite');
      assert.equal(statSync(dataDir).mode & 0o777, 0o700);
      assert.equal(statSync(file).mode & 0o777, 0o600);
    } finally {
      await proxy.close();
    }
  });
});

describe('the SQLite file', () => {
  test("is one instance's: a second storage on the same directory is refused with a message saying why", async () => {
    const dataDir = newDir();
    const first = createStorage({ kind: 'sqlite', dataDir, logger });
    try {
      assert.throws(
        () => createStorage({ kind: 'sqlite', dataDir, logger }),
        (error: unknown) =>
          error instanceof DataDirectoryError &&
          /in use by another obv-link proxy/.test(error.message) &&
          /OBV_REDIS_URL/.test(error.message),
      );
    } finally {
      await first.close();
    }
    // Closed (or killed): the directory is usable again.
    const again = createStorage({ kind: 'sqlite', dataDir, logger });
    await again.close();
  });

  test("is one process's: a second process is refused while the first runs, and takes the directory at once when the first is SIGKILLed", async () => {
    const dataDir = newDir();
    const holder = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/hold-data-directory.ts', dataDir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
        holder.once('exit', (code) => reject(new Error(`the holder exited (${code})`)));
      });
      assert.throws(
        () => createStorage({ kind: 'sqlite', dataDir, logger }),
        (error: unknown) =>
          error instanceof DataDirectoryError && /in use by another obv-link proxy/.test(error.message),
      );
      // Meanwhile others may read the database (a backup, an operator's sqlite3): it is not held exclusively.
      const reader = new DatabaseSync(join(dataDir, DATABASE_FILE), { readOnly: true });
      assert.equal(reader.prepare('SELECT count(*) AS n FROM payments').get()?.n, 0);
      reader.close();
    } finally {
      await new Promise((resolve) => {
        holder.once('exit', resolve);
        holder.kill('SIGKILL');
      });
    }
    // The operating system dropped the lock with the process: no stale lock to remove by hand.
    const again = createStorage({ kind: 'sqlite', dataDir, logger });
    await again.close();
  });

  test('keeps what was written across a reopen; a payment left pending by a process that is gone is unknown at once', async () => {
    const dataDir = newDir();
    const before = createStorage({ kind: 'sqlite', dataDir, logger });
    const payment = pendingPayment(600_000);
    await before.payments.claim(payment, 60_000);
    await before.removals.record({ merchantUserId: 'u-1', accountId: 'sa_1', removedAt: new Date().toISOString() });
    await before.close();
    const after = createStorage({ kind: 'sqlite', dataDir, logger });
    try {
      assert.equal(await after.removals.isRemoved('u-1', 'sa_1'), true);
      // Its holder was the last process on this file: the lease ends at the reopen, not ten minutes later.
      const expired = await after.payments.expireLeases(Date.now(), 10);
      assert.deepEqual(
        expired.map((p) => [p.merchantTransactionId, p.state]),
        [[payment.merchantTransactionId, 'unknown']],
      );
    } finally {
      await after.close();
    }
  });

  test("a start's idempotency claim left in flight by a process that is gone is free at the reopen", async () => {
    const dataDir = newDir();
    const before = createStorage({ kind: 'sqlite', dataDir, logger });
    assert.deepEqual(await before.sessionStore.claimIdempotencyKey('key-1', 60_000), { claimed: true });
    await before.close();
    const after = createStorage({ kind: 'sqlite', dataDir, logger });
    try {
      assert.deepEqual(await after.sessionStore.claimIdempotencyKey('key-1', 60_000), { claimed: true });
    } finally {
      await after.close();
    }
  });

  test('a file of schema 1 is migrated at the open: its events keep their order, and a pending one its next attempt', async () => {
    const dataDir = newDir();
    // Schema 1 as the previous version wrote it (the events' tables only: every other table is unchanged).
    const old = new DatabaseSync(join(dataDir, DATABASE_FILE));
    old.exec(`CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, body TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL, created_at INTEGER NOT NULL);
      CREATE INDEX events_pending ON events (created_at) WHERE status = 'pending';
      CREATE TABLE event_jobs (job TEXT PRIMARY KEY, due_at INTEGER NOT NULL);`);
    const event = (id: string) => ({ id, type: 'link.cancelled', createdAt: new Date(1_000).toISOString(), data: {} });
    const [sent, waiting] = [`evt_${'s'.repeat(22)}`, `evt_${'w'.repeat(22)}`];
    const now = Date.now();
    old
      .prepare("INSERT INTO events (id, body, attempts, status, created_at) VALUES (?, ?, 1, 'delivered', ?)")
      .run(sent, JSON.stringify(event(sent)), now);
    old
      .prepare("INSERT INTO events (id, body, attempts, status, created_at) VALUES (?, ?, 2, 'pending', ?)")
      .run(waiting, JSON.stringify(event(waiting)), now);
    old.prepare('INSERT INTO event_jobs (job, due_at) VALUES (?, ?)').run(`deliver:${waiting}`, now + 60_000);
    old.exec('PRAGMA user_version = 1');
    old.close();

    const storage = createStorage({ kind: 'sqlite', dataDir, logger });
    try {
      const listed = await storage.eventOutbox.list({ limit: 10 }, now);
      assert.deepEqual(
        listed?.events.map((stored) => [stored.event.id, stored.delivery]),
        [
          [sent, { state: 'delivered', attempts: 1 }],
          [waiting, { state: 'pending', attempts: 2, nextAttemptAt: now + 60_000 }],
        ],
      );
      assert.deepEqual(
        (await storage.eventOutbox.list({ limit: 10, delivery: 'undelivered' }, now))?.events.map(
          (stored) => stored.event.id,
        ),
        [waiting],
      );
      assert.deepEqual(await storage.eventOutbox.backlog(), { pending: 1, oldestPendingAt: now });
    } finally {
      await storage.close();
    }
    const reopened = new DatabaseSync(join(dataDir, DATABASE_FILE), { readOnly: true });
    assert.equal(reopened.prepare('PRAGMA user_version').get()?.user_version, 6);
    reopened.close();
  });
});
