// The SQLite file stays fast and small as it ages (housekeeping.ts): every clean-up reads through an
// index; records past their retention go a batch at a time with the event loop running in between; the
// pages they freed go back to the file system; the WAL is checkpointed and truncated when the proxy is
// idle; reading GET /events' pages never deletes (the outbox's trim does, in batches).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { randomEventId } from '../../../proxy/events/ids.ts';
import type { MerchantEvent } from '../../../proxy/storage/events.ts';
import { RECORD_GRACE_MS } from '../../../proxy/config/limits.ts';
import { pragma, prepare } from '../../../proxy/storage/sqlite/driver.ts';
import { Housekeeping, PURGES, WAL_SIZE_LIMIT_BYTES } from '../../../proxy/storage/sqlite/housekeeping.ts';
import { listFilter, RETIRED_EVENTS } from '../../../proxy/storage/sqlite/outbox.ts';
import { openSqliteStorage, type SqliteStorage } from '../../../proxy/storage/sqlite/storage.ts';
import { IN_FLIGHT_CLAIMS } from '../../../proxy/storage/sqlite/session-store.ts';
import { DATABASE_FILE } from '../../../proxy/storage/sqlite/database.ts';
import { DatabaseSync } from 'node:sqlite';
import { pendingPayment } from '../../helpers/storage-contract.ts';
import { pendingRecord } from '../../helpers/session-backend-contract.ts';

const DAY_MS = 24 * 3_600_000;
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A storage on a fresh directory whose clock the test moves (`clock.now`); its own timer never sweeps. */
function open(): { storage: SqliteStorage; clock: { now: number } } {
  const dir = mkdtempSync(join(tmpdir(), 'obv-housekeeping-'));
  dirs.push(dir);
  const clock = { now: Date.UTC(2026, 10, 1) };
  return { storage: openSqliteStorage(dir, { now: () => clock.now, sweepIntervalMs: 3_600_000 }), clock };
}

const count = (storage: SqliteStorage, table: string): number =>
  prepare<[], { n: number }>(storage.handle.db, `SELECT count(*) AS n FROM ${table}`).get()!.n;

function event(): MerchantEvent {
  return {
    id: randomEventId(),
    type: 'link.cancelled',
    createdAt: new Date(1_000).toISOString(),
    data: { merchantTransactionId: 'order-1' },
  };
}

/** `amount` records of every kind the sweep purges, retained for `ttlMs` from the clock's time. */
async function fill(storage: SqliteStorage, clock: { now: number }, amount: number, ttlMs: number): Promise<void> {
  const payments: Promise<unknown>[] = [];
  for (let index = 0; index < amount; index++) {
    const record = { ...pendingRecord(ttlMs - RECORD_GRACE_MS, clock.now) };
    await storage.sessionStore.create(record);
    await storage.sessionStore.mark(`return:${record.sessionId}`, record.sessionId, ttlMs);
    await storage.linkSessions.create(
      `link-${record.sessionId}`,
      { merchantUserId: 'u', merchantTransactionId: 'o', createdAt: 1, expiresAt: 2 },
      ttlMs,
    );
    await storage.sessionStore.claimIdempotencyKey(`start-${record.sessionId}`, ttlMs);
    await storage.sessionStore.completeIdempotencyKey(`start-${record.sessionId}`, record.sessionId, ttlMs);
    // Payments acknowledge (an fsync each): concurrent, so they share fsyncs.
    payments.push(storage.payments.claim({ ...pendingPayment(), idempotencyKey: `pay-${record.sessionId}` }, ttlMs));
  }
  await Promise.all(payments);
}

describe('SQLite housekeeping', () => {
  test('every clean-up reads through an index, never a scan of its table', async () => {
    const { storage } = open();
    try {
      for (const [table, where] of [...PURGES, ['events', RETIRED_EVENTS] as const]) {
        const plan = prepare(storage.handle.db, `EXPLAIN QUERY PLAN SELECT rowid FROM ${table} WHERE ${where} LIMIT ?`)
          .all(0, 10)
          .map((row) => String(row.detail));
        assert.ok(
          plan.some((step) => new RegExp(`^SEARCH ${table} USING (COVERING )?INDEX`).test(step)),
          `${table}: ${plan.join('; ')}`,
        );
        assert.ok(!plan.some((step) => step.startsWith('SCAN')), `${table}: ${plan.join('; ')}`);
      }
    } finally {
      await storage.close();
    }
  });

  test('a schema-3 file gains the index of claims in flight at its open, which then clears them through it and keeps the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'obv-housekeeping-'));
    dirs.push(dir);
    const first = openSqliteStorage(dir, { sweepIntervalMs: 3_600_000 });
    await first.sessionStore.claimIdempotencyKey('killed-start', DAY_MS);
    await first.sessionStore.claimIdempotencyKey('answered-start', DAY_MS);
    await first.sessionStore.completeIdempotencyKey('answered-start', 'session-1', DAY_MS);
    await first.close();
    // What schema 3 (the release before) left: the same tables without the partial index.
    const file = new DatabaseSync(join(dir, DATABASE_FILE));
    file.exec('DROP INDEX idempotency_claims_in_flight; PRAGMA user_version = 3');
    file.close();
    const storage = openSqliteStorage(dir, { sweepIntervalMs: 3_600_000 });
    try {
      assert.equal(Number(pragma(storage.handle.db, 'user_version')), 6);
      const plan = prepare(
        storage.handle.db,
        `EXPLAIN QUERY PLAN DELETE FROM idempotency_claims WHERE ${IN_FLIGHT_CLAIMS}`,
      )
        .all()
        .map((row) => String(row.detail));
      assert.deepEqual(plan, ['SEARCH idempotency_claims USING INDEX idempotency_claims_in_flight (session_id=?)']);
      const claims = prepare<[], { key: string; session_id: string | null }>(
        storage.handle.db,
        'SELECT key, session_id FROM idempotency_claims',
      ).all();
      assert.deepEqual(
        claims.map((row) => [row.key, row.session_id]),
        [['answered-start', 'session-1']],
      );
    } finally {
      await storage.close();
    }
  });

  test('every GET /events page reads from `after` on through an index: the filtered ones skip delivered events without reading them', async () => {
    const { storage } = open();
    try {
      const plan = (where: string) =>
        prepare(
          storage.handle.db,
          `EXPLAIN QUERY PLAN SELECT seq FROM events WHERE seq > ? AND ${where} ORDER BY seq LIMIT ?`,
        )
          .all(0, 10)
          .map((row) => String(row.detail))
          .join('; ');
      assert.match(
        plan(listFilter(['pending', 'delivered', 'failed'])),
        /^SEARCH events USING INTEGER PRIMARY KEY \(rowid>\?\)$/,
      );
      for (const states of [['pending', 'failed'], ['pending'], ['failed']]) {
        assert.match(
          plan(listFilter(states)),
          /^SEARCH events USING INDEX events_undelivered \(seq>\?\)$/,
          states.join(', '),
        );
      }
    } finally {
      await storage.close();
    }
  });

  test('a new file is schema 6, in auto_vacuum INCREMENTAL, with the WAL bounded to 4 MiB after a checkpoint', async () => {
    const { storage } = open();
    try {
      assert.equal(Number(pragma(storage.handle.db, 'user_version')), 6);
      assert.equal(Number(pragma(storage.handle.db, 'auto_vacuum')), 2);
      assert.equal(Number(pragma(storage.handle.db, 'journal_size_limit')), WAL_SIZE_LIMIT_BYTES);
    } finally {
      await storage.close();
    }
  });

  test('the sweep deletes what is past its retention a batch per step, the event loop running between steps, and keeps the rest', async () => {
    const { storage, clock } = open();
    try {
      await fill(storage, clock, 120, DAY_MS);
      await fill(storage, clock, 10, 30 * DAY_MS);
      // A start still in flight: its claim has no session yet, and stays until the process ends.
      await storage.sessionStore.claimIdempotencyKey('in-flight', DAY_MS);
      clock.now += 2 * DAY_MS;
      const housekeeping = new Housekeeping(storage.handle, { now: () => clock.now, batchRows: 50, idleMs: 10 });
      const sweeping = housekeeping.sweep();
      // The first step ran before sweep() returned; every other one comes on a later turn of the loop.
      assert.equal(count(storage, 'sessions'), 130 - 50);
      assert.equal(count(storage, 'markers'), 130);
      const report = await sweeping;
      for (const table of ['sessions', 'markers', 'link_sessions', 'payments', 'payment_keys'])
        assert.equal(count(storage, table), 10, table);
      assert.equal(count(storage, 'idempotency_claims'), 11, 'the live claims and the one in flight');
      assert.equal(report.deleted, 6 * 120);
      // Each table: ceil(120 / 50) = 3 steps, the last one short, each followed by a checkpoint step of
      // its own (so SQLite's automatic one never lands inside a delete).
      for (const table of ['sessions', 'markers', 'link_sessions', 'payments', 'payment_keys', 'idempotency_claims']) {
        assert.equal(report.times.counts[`delete ${table}`], 3, table);
      }
      assert.ok(report.times.counts.checkpoint! >= 6 * 3, `${report.times.counts.checkpoint} checkpoints`);
    } finally {
      await storage.close();
    }
  });

  test('gives the freed pages back to the file system in small steps', async () => {
    const { storage, clock } = open();
    try {
      const record = JSON.stringify({ merchantUserId: 'u', padding: 'x'.repeat(2_000) });
      const insert = prepare(storage.handle.db, 'INSERT INTO link_sessions (id, record, purge_at) VALUES (?, ?, ?)');
      storage.handle.transaction(() => {
        for (let index = 0; index < 2_000; index++) insert.run(`link-${index}`, record, clock.now + 1_000);
      });
      const pagesBefore = Number(pragma(storage.handle.db, 'page_count'));
      clock.now += 2_000;
      const housekeeping = new Housekeeping(storage.handle, { now: () => clock.now, vacuumPages: 64, idleMs: 10 });
      const report = await housekeeping.sweep();
      const pagesAfter = Number(pragma(storage.handle.db, 'page_count'));
      assert.equal(Number(pragma(storage.handle.db, 'freelist_count')), 0);
      assert.ok(report.vacuumedPages > 1_000, `${report.vacuumedPages} pages given back`);
      // The file shrank by those pages (and the pointer-map pages that indexed them).
      assert.ok(pagesBefore - pagesAfter >= report.vacuumedPages, `${pagesBefore} → ${pagesAfter} pages`);
      assert.ok(report.times.steps >= report.vacuumedPages / 64, 'at most 64 pages a step');
    } finally {
      await storage.close();
    }
  });

  test('checkpoints and truncates the WAL when no commit came for a moment, and not while commits come', async () => {
    const { storage, clock } = open();
    const wal = `${storage.handle.path}-wal`;
    try {
      await storage.sessionStore.create(pendingRecord(60_000, clock.now));
      assert.ok(statSync(wal).size > 0);
      const idle = await new Housekeeping(storage.handle, { now: () => clock.now, idleMs: 20 }).sweep();
      assert.equal(idle.checkpointed, true);
      assert.equal(statSync(wal).size, 0, 'truncated');

      const busy = new Housekeeping(storage.handle, { now: () => clock.now, idleMs: 200 });
      const sweeping = busy.sweep();
      await new Promise((resolve) => setTimeout(resolve, 20));
      await storage.sessionStore.create(pendingRecord(60_000, clock.now));
      assert.equal((await sweeping).checkpointed, false);
      assert.ok(statSync(wal).size > 0, 'left as it was');
    } finally {
      await storage.close();
    }
  });

  test('checkpoints run in a worker thread: the event loop turns while one copies a large WAL', async () => {
    const { storage } = open();
    const wal = `${storage.handle.path}-wal`;
    try {
      // A WAL of some 2,500 pages that no automatic checkpoint copied.
      storage.handle.db.exec('PRAGMA wal_autocheckpoint = 0');
      const insert = prepare(storage.handle.db, 'INSERT INTO markers (key, value, purge_at) VALUES (?, ?, ?)');
      storage.handle.transaction(() => {
        for (let index = 0; index < 5_000; index++) insert.run(`k${index}`, 'v'.repeat(1_500), 0);
      });
      let turns = 0;
      let done = false;
      const turn = (): void => {
        turns++;
        if (!done) setImmediate(turn);
      };
      setImmediate(turn);
      const result = await storage.handle.checkpoint('PASSIVE');
      done = true;
      assert.ok(result.logFrames > 2_000, `${result.logFrames} frames`);
      assert.equal(result.checkpointedFrames, result.logFrames, 'all copied');
      assert.ok(turns > 0, 'the event loop ran while the checkpoint did');
      assert.equal((await storage.handle.checkpoint('TRUNCATE')).busy, false);
      assert.equal(statSync(wal).size, 0, 'truncated');
    } finally {
      await storage.close();
    }
    // The worker's connection closed first, so the proxy's was the file's last: it removed the WAL.
    assert.equal(existsSync(wal), false, 'no WAL left after the close');
  });

  test('a sweep under way stops at its next step when the storage closes', async () => {
    const { storage, clock } = open();
    const insert = prepare(storage.handle.db, 'INSERT INTO markers (key, value, purge_at) VALUES (?, ?, ?)');
    storage.handle.transaction(() => {
      for (let index = 0; index < 1_000; index++) insert.run(`m-${index}`, 'v', clock.now);
    });
    clock.now += 1;
    const sweeping = storage.sweep();
    await storage.close();
    const report = await sweeping;
    assert.ok(report.deleted < 1_000, `${report.deleted} deleted before the close`);
  });
});

describe('SQLite events outbox: the retention', () => {
  test('a page of GET /events never deletes; trim removes events past the retention a batch per step, and keeps pending ones', async () => {
    const { storage } = open();
    const outbox = storage.eventOutbox;
    try {
      const t0 = 1_000_000;
      const events = Array.from({ length: 650 }, () => event());
      await Promise.all(events.map((recorded) => outbox.append(recorded, t0)));
      for (const recorded of events.slice(1)) await outbox.settle(recorded.id, { ok: true }, t0 + 1);
      const later = t0 + 8 * DAY_MS;
      assert.equal((await outbox.list({ limit: 1_000 }, later))!.events.length, 650, 'listing deleted nothing');
      // A second trim while the first runs (the worker's timer, a backlog) does not start another.
      const [{ deleted, times }, again] = await Promise.all([outbox.trimInSteps(later), outbox.trimInSteps(later)]);
      assert.equal(deleted, 649);
      assert.deepEqual(
        times.counts,
        { 'delete events': 7, checkpoint: 7 },
        'six steps of 100 and one of 49, each followed by its checkpoint',
      );
      assert.equal(again.deleted, 649, 'the same trim');
      assert.deepEqual(
        (await outbox.list({ limit: 1_000 }, later))!.events.map((stored) => stored.event.id),
        [events[0]!.id],
        'the pending one stays',
      );
    } finally {
      await storage.close();
    }
  });
});
