// backupDatabase (what `npx obv-link-proxy backup` runs): a consistent copy of the data directory's
// database taken while it is being written, off the caller's event loop, created 0600, never over an
// existing file unless asked, and usable as a data directory of its own (the restore).
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DatabaseSync } from 'node:sqlite';
import { backupDatabase, BackupError, createLogger, DataDirectoryError } from '../../../proxy/index.ts';
import { createStorage } from '../../../proxy/storage/create-storage.ts';
import type { Storage } from '../../../proxy/storage/storage.ts';
import { DATABASE_FILE } from '../../../proxy/storage/sqlite/database.ts';
import { pendingPayment } from '../../helpers/storage-contract.ts';

const logger = createLogger('silent');
const dirs: string[] = [];
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'obv-backup-'));
  dirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A row in the markers table (no fsync per write: the filling stays quick). */
const write = (storage: Storage, key: string, value = 'v') => storage.sessionStore.mark(key, value, 3_600_000);

function countIn(file: string, table: string): number {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()?.n);
  } finally {
    db.close();
  }
}

describe('backupDatabase', () => {
  test('copies what was committed before it began, while the caller keeps writing: a consistent, private file', async (t) => {
    const dataDir = newDir();
    const storage = createStorage({ kind: 'sqlite', dataDir, logger });
    try {
      // Enough rows that the copy takes a while (a few MB).
      const padding = 'x'.repeat(2_000);
      for (let i = 0; i < 3_000; i++) await write(storage, `before-${i}`, padding);
      const file = join(newDir(), 'copy.sqlite');
      let writtenDuring = 0;
      let done = false;
      const backup = backupDatabase({ dataDir, file }).finally(() => (done = true));
      // The proxy keeps serving: writes go on (and commit) while the copy is taken.
      while (!done) {
        await write(storage, `during-${writtenDuring++}`);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const result = await backup;
      t.diagnostic(`${writtenDuring} writes committed during a backup of ${result.bytes} bytes (${result.tookMs} ms)`);
      assert.ok(writtenDuring > 1, `the event loop turned during the backup (${writtenDuring} writes)`);
      assert.equal(result.file, file);
      assert.equal(result.bytes, statSync(file).size);
      assert.equal(result.database, join(dataDir, DATABASE_FILE));
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const copied = countIn(file, 'markers');
      assert.ok(
        copied >= 3_000 && copied <= 3_000 + writtenDuring,
        `every row committed before the backup, and no torn one (${copied})`,
      );
      const check = new DatabaseSync(file, { readOnly: true });
      assert.equal(check.prepare('PRAGMA integrity_check').get()?.integrity_check, 'ok');
      check.close();
    } finally {
      await storage.close();
    }
  });

  test('restores: the copy, as obv-link.sqlite in a new data directory, opens with its records', async () => {
    const dataDir = newDir();
    const storage = createStorage({ kind: 'sqlite', dataDir, logger });
    const payment = pendingPayment(600_000);
    await storage.payments.claim(payment, 60_000);
    await storage.payments.finish(
      { ...payment, state: 'completed', transactionId: 'txn-1', leaseExpiresAt: undefined },
      60_000,
    );
    const file = join(newDir(), 'copy.sqlite');
    await backupDatabase({ dataDir, file });
    await storage.close();

    const restored = newDir();
    copyFileSync(file, join(restored, DATABASE_FILE));
    const reopened = createStorage({ kind: 'sqlite', dataDir: restored, logger });
    try {
      const paid = await reopened.payments.get(payment.merchantTransactionId);
      assert.equal(paid?.state, 'completed');
      assert.equal(paid?.transactionId, 'txn-1');
    } finally {
      await reopened.close();
    }
  });

  test('never replaces an existing file unless asked, and then does', async () => {
    const dataDir = newDir();
    const storage = createStorage({ kind: 'sqlite', dataDir, logger });
    await storage.close();
    const file = join(newDir(), 'taken.sqlite');
    writeFileSync(file, 'an older backup');
    await assert.rejects(
      backupDatabase({ dataDir, file }),
      (error: unknown) =>
        error instanceof BackupError &&
        error.message === `${file} exists: choose a new name, or pass --overwrite (overwrite: true) to replace it.`,
    );
    assert.equal(readFileSync(file, 'utf8'), 'an older backup');
    await backupDatabase({ dataDir, file, overwrite: true });
    assert.equal(readFileSync(file).subarray(0, 15).toString(), 'SQLite format 3');
    assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  test('refuses to write over the database itself, into a missing directory, or from a directory holding none', async () => {
    const dataDir = newDir();
    const storage = createStorage({ kind: 'sqlite', dataDir, logger });
    await storage.close();
    await assert.rejects(
      backupDatabase({ dataDir, file: join(dataDir, DATABASE_FILE), overwrite: true }),
      /is one of the proxy's own files/,
    );
    await assert.rejects(
      backupDatabase({ dataDir, file: join(dataDir, `${DATABASE_FILE}-wal`), overwrite: true }),
      /is one of the proxy's own files/,
    );
    const missing = join(newDir(), 'no', 'such');
    await assert.rejects(
      backupDatabase({ dataDir, file: join(missing, 'copy.sqlite') }),
      (error: unknown) => error instanceof BackupError && error.message.startsWith(`${missing} does not exist`),
    );
    const empty = newDir();
    await assert.rejects(
      backupDatabase({ dataDir: empty, file: join(newDir(), 'copy.sqlite') }),
      (error: unknown) =>
        error instanceof DataDirectoryError &&
        error.message ===
          `OBV_DATA_DIR ${empty} holds no ${DATABASE_FILE}: set OBV_DATA_DIR to the directory the proxy runs with.`,
    );
    const nowhere = join(newDir(), 'nowhere');
    await assert.rejects(
      backupDatabase({ dataDir: nowhere, file: join(newDir(), 'copy.sqlite') }),
      /^DataDirectoryError: OBV_DATA_DIR .* does not exist/,
    );
  });

  test('a damaged database gives no backup, and says so', async () => {
    const dataDir = newDir();
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, DATABASE_FILE), Buffer.alloc(8192, 7));
    const folder = newDir();
    await assert.rejects(
      backupDatabase({ dataDir, file: join(folder, 'copy.sqlite') }),
      /is damaged \(file is not a database\); no backup was written/,
    );
    assert.throws(() => statSync(join(folder, 'copy.sqlite')), /ENOENT/);
  });
});
