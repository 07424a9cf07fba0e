// The SQLite storage on a real, tiny volume (a 1 MiB tmpfs): writes that find no room throw
// StorageFullError (storage/sqlite/disk-full.ts) and store nothing, reads go on, and once space is freed
// the storage takes writes again and the WAL gives the space back. The volume is the one of issue 37
// ("on a 1 MiB volume the WAL kept the little space freed and the proxy never recovered"): with SQLite's
// default 4 MB between checkpoints the WAL alone filled it, and its pages could never be copied out.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createLogger, StorageFullError } from '../../../proxy/index.ts';
import { createStorage } from '../../../proxy/storage/create-storage.ts';
import { DATABASE_FILE } from '../../../proxy/storage/sqlite/database.ts';
import { openSqliteStorage } from '../../../proxy/storage/sqlite/storage.ts';
import { pendingPayment } from '../../helpers/storage-contract.ts';
import { mountSmallVolume, smallVolumeSkipReason } from '../../helpers/small-volume.ts';

const logger = createLogger('silent');
const VOLUME_BYTES = 1024 * 1024;
/** Bounds the filling loop: far more rows than 1 MiB holds. */
const MAX_WRITES = 20_000;
/** Resolves once the WAL file is empty (the truncation runs on a timer, at most once a second); bounded. */
async function walTruncated(wal: () => number): Promise<number> {
  for (let waited = 0; wal() > 0 && waited < 3_000; waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return wal();
}

describe('SQLite on a full disk', { skip: smallVolumeSkipReason() }, () => {
  test('a write that finds no room is a StorageFullError and stores nothing; freed space is taken again, and the WAL gives it back', async (t) => {
    const volume = mountSmallVolume(VOLUME_BYTES);
    t.after(() => volume.close());
    // Space an operator can free later (logs, an old backup).
    volume.fill(VOLUME_BYTES - 256 * 1024);
    const dataDir = join(volume.dir, 'data');
    const storage = createStorage({ kind: 'sqlite', dataDir, logger });
    t.after(() => storage.close());
    const wal = () => statSync(join(dataDir, `${DATABASE_FILE}-wal`)).size;

    let refused: unknown;
    let written = 0;
    for (; written < MAX_WRITES && refused === undefined; written++) {
      await storage.sessionStore
        .mark(`row-${written}`, 'v'.repeat(300), 3_600_000)
        .catch((error: unknown) => (refused = error));
    }
    assert.ok(refused instanceof StorageFullError, `a StorageFullError, not ${String(refused)}`);
    assert.equal(refused.location, dataDir);
    assert.ok(refused.freeBytes !== undefined && refused.freeBytes < 64 * 1024, `${refused.freeBytes} bytes free`);
    t.diagnostic(
      `${written} rows before the volume was full; WAL ${wal()} bytes, database ${statSync(join(dataDir, DATABASE_FILE)).size} bytes`,
    );
    // The WAL is checkpointed at a sixteenth of this small volume, so the data went into the database
    // file; with SQLite's default it held nearly all of it (745 KB of 1 MiB after 48 rows).
    assert.ok(wal() <= VOLUME_BYTES / 4, `the WAL stays small on a small volume (${wal()} bytes)`);

    // Money too: a payment that finds no room is refused, and not on record.
    const payment = pendingPayment();
    await assert.rejects(storage.payments.claim(payment, 60_000), StorageFullError);
    assert.equal(await storage.payments.get(payment.merchantTransactionId), undefined);
    // Reads go on.
    assert.equal(await storage.sessionStore.readMark('row-0'), 'v'.repeat(300));

    volume.free();
    await storage.payments.claim(payment, 60_000);
    assert.equal((await storage.payments.get(payment.merchantTransactionId))?.state, 'pending');
    // The first write that succeeds after failures has the WAL truncated.
    assert.equal(await walTruncated(wal), 0, 'the WAL gave its space back');
    for (let i = 0; i < 200; i++) await storage.sessionStore.mark(`after-${i}`, 'v'.repeat(300), 3_600_000);
    assert.ok(wal() <= VOLUME_BYTES / 4, `and stays small (${wal()} bytes)`);
  });

  test('a failed write truncates the WAL as soon as the database can take its pages', async (t) => {
    const volume = mountSmallVolume(VOLUME_BYTES);
    t.after(() => volume.close());
    const dataDir = join(volume.dir, 'data');
    const storage = createStorage({ kind: 'sqlite', dataDir, logger });
    t.after(() => storage.close());
    const wal = () => statSync(join(dataDir, `${DATABASE_FILE}-wal`)).size;
    // Committed pages in the WAL, then a volume with no room for anything else.
    for (let i = 0; i < 5; i++) await storage.sessionStore.mark(`row-${i}`, 'v'.repeat(300), 3_600_000);
    assert.ok(wal() > 0);
    volume.fill(0);
    // A write too large for what is left: refused; its checkpoint can run (the pages fit in the database's
    // own free space or the little left), and the WAL's space is given back.
    await assert.rejects(storage.sessionStore.mark('big', 'v'.repeat(512 * 1024), 3_600_000), StorageFullError);
    assert.equal(await walTruncated(wal), 0, 'the WAL was checkpointed and truncated after the failure');
    assert.equal(
      await storage.sessionStore.readMark('row-4'),
      'v'.repeat(300),
      'its committed rows are in the database',
    );
  });

  test('a WAL whose pages the database has no room for yet is truncated by the first write after space returns', async (t) => {
    const volume = mountSmallVolume(VOLUME_BYTES);
    t.after(() => volume.close());
    const dataDir = join(volume.dir, 'data');
    const storage = openSqliteStorage(dataDir);
    t.after(() => storage.close());
    const wal = () => statSync(join(dataDir, `${DATABASE_FILE}-wal`)).size;
    // From an empty WAL, new pages (fewer than a checkpoint's worth): copying them out grows the database.
    storage.handle.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    for (let i = 0; i < 2; i++) await storage.sessionStore.mark(`page-${i}`, 'p'.repeat(5_000), 3_600_000);
    volume.fill(0);
    await assert.rejects(storage.sessionStore.mark('more', 'v'.repeat(512 * 1024), 3_600_000), StorageFullError);
    const held = await walTruncated(wal);
    assert.ok(held > 0, 'the checkpoint after the failure could not run: the database has no room to grow');
    volume.free();
    await storage.sessionStore.mark('back', 'v', 3_600_000);
    assert.equal(await walTruncated(wal), 0, `the WAL (${held} bytes) gave back the space once a write went through`);
    assert.equal(await storage.sessionStore.readMark('page-1'), 'p'.repeat(5_000));
  });
  test('a storage closed while a truncation is due closes cleanly (the timer is dropped, nothing runs on a closed file)', async (t) => {
    const volume = mountSmallVolume(VOLUME_BYTES);
    t.after(() => volume.close());
    const storage = createStorage({ kind: 'sqlite', dataDir: join(volume.dir, 'data'), logger });
    volume.fill(0);
    // The first failure's truncation runs at once; the second's is due a second later.
    await assert.rejects(storage.sessionStore.mark('a', 'v'.repeat(512 * 1024), 3_600_000), StorageFullError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await assert.rejects(storage.sessionStore.mark('b', 'v'.repeat(512 * 1024), 3_600_000), StorageFullError);
    await storage.close();
    let uncaught: unknown;
    const record = (error: unknown) => (uncaught = error);
    process.once('uncaughtException', record);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    process.removeListener('uncaughtException', record);
    assert.equal(uncaught, undefined);
  });
});
