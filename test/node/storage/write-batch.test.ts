// Group transactions (proxy/storage/sqlite/write-batch.ts): the writes asked for in one turn of the event
// loop commit in one transaction, in the order asked, at most MAX_GROUP at a time; a write that throws
// fails alone, every other one of its group committing once; a transaction that fails by itself (BEGIN,
// COMMIT) fails its group, run once. What follows a commit in memory (`committed`) runs once per write,
// right after the COMMIT that kept it. On a real SQLite file, through the driver's own `transaction`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, test } from 'node:test';
import { openDatabase, prepare, transaction, type SqliteDatabase } from '../../../proxy/storage/sqlite/driver.ts';
import { MAX_GROUP, WriteBatch } from '../../../proxy/storage/sqlite/write-batch.ts';

const dir = mkdtempSync(join(tmpdir(), 'obv-write-batch-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('a group of writes (WriteBatch)', () => {
  let db: SqliteDatabase;
  let batch: WriteBatch;
  /** Each transaction the batch ran: how many statements of the table's were in it when it ended. */
  let transactions: { ok: boolean }[];
  /** When set, the next transaction's COMMIT fails after its steps ran (a full disk, a lock): once. */
  let failNextCommit: Error | undefined;
  let files = 0;

  beforeEach(() => {
    db = openDatabase(join(dir, `batch-${++files}.sqlite`), 1_000);
    db.exec('PRAGMA journal_mode = WAL');
    // No key: a write run twice would show as two rows.
    db.exec('CREATE TABLE rows (name TEXT NOT NULL)');
    transactions = [];
    failNextCommit = undefined;
    batch = new WriteBatch((step) => {
      try {
        const result = transaction(db, () => {
          const value = step();
          const failure = failNextCommit;
          failNextCommit = undefined;
          if (failure) throw failure;
          return value;
        });
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
    const committed: string[] = [];
    const keep = (name: string) => committed.push(`${name}, ${names().length} rows`);
    const settled = await Promise.allSettled([
      batch.run(insert('a'), keep),
      batch.run(() => {
        insert('half-written')();
        throw refused;
      }, keep),
      batch.run(insert('c'), keep),
    ]);
    assert.deepEqual(settled, [
      { status: 'fulfilled', value: 'a' },
      { status: 'rejected', reason: refused },
      { status: 'fulfilled', value: 'c' },
    ]);
    // The group, rolled back; then each write on its own.
    assert.deepEqual(transactions, [{ ok: false }, { ok: true }, { ok: false }, { ok: true }]);
    assert.deepEqual(names(), ['a', 'c'], 'none twice, nothing of the failed write');
    // Once each, right after the COMMIT that kept it (its own, here); never for a rolled-back run.
    assert.deepEqual(committed, ['a, 1 rows', 'c, 2 rows']);
  });

  test('told once committed, before any caller resumes: what must follow the COMMIT in memory', async () => {
    const order: string[] = [];
    const writes = ['a', 'b'].map((name) =>
      batch.run(insert(name), () => order.push(`committed ${name}`)).then(() => order.push(`resumed ${name}`)),
    );
    await Promise.all(writes);
    assert.deepEqual(order, ['committed a', 'committed b', 'resumed a', 'resumed b']);
    assert.deepEqual(transactions, [{ ok: true }]);
  });

  test("a group whose COMMIT fails is refused with the transaction's error, each write run once", async () => {
    const full = new Error('database or disk is full');
    failNextCommit = full;
    let runs = 0;
    const committed: string[] = [];
    const settled = await Promise.allSettled(
      ['a', 'b', 'c'].map((name) =>
        batch.run(
          () => {
            runs++;
            return insert(name)();
          },
          () => committed.push(name),
        ),
      ),
    );
    assert.deepEqual(
      settled.map((each) => each.status === 'rejected' && each.reason),
      [full, full, full],
    );
    assert.equal(runs, 3, 'not run again: the next turn tries afresh');
    assert.deepEqual([names(), committed], [[], []]);
    // The next turn's writes commit.
    assert.equal(await batch.run(insert('d')), 'd');
    assert.deepEqual(names(), ['d']);
  });

  test(`at most ${MAX_GROUP} writes a transaction, however many were asked for in one turn`, async () => {
    const count = 2 * MAX_GROUP + 1;
    await Promise.all(Array.from({ length: count }, (_, index) => batch.run(insert(`w${index}`))));
    assert.equal(transactions.length, 3);
    assert.deepEqual(
      names(),
      Array.from({ length: count }, (_, index) => `w${index}`),
    );
  });

  test('flush writes what waits at once (the database is about to close)', async () => {
    const waiting = [batch.run(insert('a')), batch.run(insert('b'))];
    batch.flush();
    assert.deepEqual(names(), ['a', 'b'], 'committed before flush returned');
    db.close();
    assert.deepEqual(await Promise.all(waiting), ['a', 'b']);
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
