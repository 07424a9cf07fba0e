// Group transactions (proxy/storage/sqlite/write-batch.ts): the writes asked for in one turn of the event
// loop commit in one transaction, in the order asked; a write that throws fails alone, every other one of
// its group committing once. On a real SQLite file, through the driver's own `transaction`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, test } from 'node:test';
import { openDatabase, prepare, transaction, type SqliteDatabase } from '../../../proxy/storage/sqlite/driver.ts';
import { WriteBatch } from '../../../proxy/storage/sqlite/write-batch.ts';

const dir = mkdtempSync(join(tmpdir(), 'obv-write-batch-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('a group of writes (WriteBatch)', () => {
  let db: SqliteDatabase;
  let batch: WriteBatch;
  /** Each transaction the batch ran: how many statements of the table's were in it when it ended. */
  let transactions: { ok: boolean }[];
  let files = 0;

  beforeEach(() => {
    db = openDatabase(join(dir, `batch-${++files}.sqlite`), 1_000);
    db.exec('PRAGMA journal_mode = WAL');
    // No key: a write run twice would show as two rows.
    db.exec('CREATE TABLE rows (name TEXT NOT NULL)');
    transactions = [];
    batch = new WriteBatch((step) => {
      try {
        const result = transaction(db, step);
        transactions.push({ ok: true });
        return result;
      } catch (error) {
        transactions.push({ ok: false });
        throw error;
      }
    });
  });

  const insert = (name: string) => () => {
    prepare(db, 'INSERT INTO rows (name) VALUES (?)').run(name);
    return name;
  };
  const names = () =>
    prepare<[], { name: string }>(db, 'SELECT name FROM rows ORDER BY rowid')
      .all()
      .map((row) => row.name);

  test('asked for in the same turn: one transaction, committed in the order asked, each told its own result', async () => {
    const results = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((name) => batch.run(insert(name))));
    assert.deepEqual(results, ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(transactions, [{ ok: true }]);
    assert.deepEqual(names(), ['a', 'b', 'c', 'd', 'e']);
  });

  test('resolves only once its transaction has committed: a second connection sees the write then', async () => {
    const other = openDatabase(join(dir, `batch-${files}.sqlite`), 1_000);
    try {
      const seen = batch.run(insert('a')).then(() => prepare(other, 'SELECT count(*) AS n FROM rows').get()?.n);
      assert.equal(
        prepare(other, 'SELECT count(*) AS n FROM rows').get()?.n,
        0,
        'nothing written before the turn ends',
      );
      assert.equal(await seen, 1);
    } finally {
      other.close();
    }
  });

  test('asked for in a later turn: the next transaction', async () => {
    await batch.run(insert('a'));
    await Promise.all([batch.run(insert('b')), batch.run(insert('c'))]);
    assert.deepEqual(transactions, [{ ok: true }, { ok: true }]);
    assert.deepEqual(names(), ['a', 'b', 'c']);
  });

  test('a write that throws fails alone: its group is rolled back and every other write commits once, in order', async () => {
    const refused = new Error('a constraint, a full disk');
    const settled = await Promise.allSettled([
      batch.run(insert('a')),
      batch.run(() => {
        insert('half-written')();
        throw refused;
      }),
      batch.run(insert('c')),
    ]);
    assert.deepEqual(settled, [
      { status: 'fulfilled', value: 'a' },
      { status: 'rejected', reason: refused },
      { status: 'fulfilled', value: 'c' },
    ]);
    // The group, rolled back; then each write on its own.
    assert.deepEqual(transactions, [{ ok: false }, { ok: true }, { ok: false }, { ok: true }]);
    assert.deepEqual(names(), ['a', 'c'], 'none twice, nothing of the failed write');
  });

  test('a lone write that throws is rejected, and runs once', async () => {
    let runs = 0;
    await assert.rejects(
      batch.run(() => {
        runs++;
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.equal(runs, 1);
    assert.deepEqual(names(), []);
  });
});
