// Acknowledged means durable on SQLite: every repository method whose answer acknowledges something (a
// stored outcome, a payment, a removal, an event recorded, acknowledged or redelivered) resolves only once
// an fsync of the WAL that began after its commit has completed; the others never wait for one. One fsync
// serves every caller that arrived before it began (group commit). The disk is a stand-in here whose
// fsyncs the test holds and releases, so "not yet resolved" is observed, not timed.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { randomEventId } from '../../../proxy/events/ids.ts';
import type { MerchantEvent } from '../../../proxy/storage/events.ts';
import { openSqliteStorage, type SqliteStorage } from '../../../proxy/storage/sqlite/storage.ts';
import { DATABASE_FILE } from '../../../proxy/storage/sqlite/database.ts';
import { DurabilityError } from '../../../proxy/storage/errors.ts';
import { toProblem } from '../../../proxy/http/problem.ts';
import { pendingPayment } from '../../helpers/storage-contract.ts';
import { pendingRecord, SUCCESS } from '../../helpers/session-backend-contract.ts';

const RETENTION_MS = 60_000;
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface HeldFsync {
  /** The file the descriptor is open on. */
  path: string;
  release(): void;
  fail(error: Error): void;
}

/**
 * A disk whose fsyncs of the WAL wait until the test releases them (the directory's one is let through
 * at once, and noted). Everything else is the real SQLite file.
 */
class HeldDisk {
  readonly held: HeldFsync[] = [];
  readonly directorySyncs: string[] = [];
  #arrived: (() => void) | undefined;

  readonly fsync = (fd: number): Promise<void> => {
    const path = readlinkSync(`/proc/self/fd/${fd}`);
    if (!path.endsWith('-wal')) {
      this.directorySyncs.push(path);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      this.held.push({ path, release: resolve, fail: reject });
      this.#arrived?.();
    });
  };

  /** The fsyncs of the WAL that were started, held or released. */
  get walSyncs(): number {
    return this.held.length;
  }

  /** Waits (at most 5 s) until the `count`-th fsync of the WAL has started; returns it. */
  async started(count: number): Promise<HeldFsync> {
    const deadline = Date.now() + 5_000;
    while (this.held.length < count) {
      if (Date.now() > deadline) throw new Error(`fsync ${count} of the WAL never started (${this.held.length} did)`);
      await new Promise<void>((resolve) => {
        this.#arrived = resolve;
        setTimeout(resolve, 100);
      });
    }
    return this.held[count - 1]!;
  }
}

function open(disk: HeldDisk): SqliteStorage {
  const dir = mkdtempSync(join(tmpdir(), 'obv-durability-'));
  dirs.push(dir);
  // No sweep during a test: its timer would only add noise.
  return openSqliteStorage(dir, { fsync: disk.fsync, sweepIntervalMs: 3_600_000 });
}

/**
 * How many commits the `-wal` file holds: its frames of the current generation (their salts are the
 * header's) that end a transaction (a database size in pages, where other frames have 0). sqlite.org,
 * "WAL-mode File Format".
 */
function walCommits(walPath: string): number {
  const wal = readFileSync(walPath);
  if (wal.length < 32) return 0;
  const pageSize = wal.readUInt32BE(8);
  let commits = 0;
  for (let frame = 32; frame + 24 + pageSize <= wal.length; frame += 24 + pageSize) {
    const current =
      wal.readUInt32BE(frame + 8) === wal.readUInt32BE(16) && wal.readUInt32BE(frame + 12) === wal.readUInt32BE(20);
    if (current && wal.readUInt32BE(frame + 4) !== 0) commits++;
  }
  return commits;
}

/** Runs `body` on a storage over a held disk; then releases every fsync still held and closes it. */
async function withHeldDisk(body: (storage: SqliteStorage, disk: HeldDisk) => Promise<void>): Promise<void> {
  const disk = new HeldDisk();
  const storage = open(disk);
  try {
    await body(storage, disk);
  } finally {
    for (const held of disk.held) held.release();
    await storage.close();
  }
}

/** Whether `promise` has settled, after the event loop has had a few turns to settle it. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let turn = 0; turn < 5; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
  return settled;
}

function event(): MerchantEvent {
  return {
    id: randomEventId(),
    type: 'link.cancelled',
    createdAt: new Date(1_000).toISOString(),
    data: { merchantTransactionId: 'order-1' },
  };
}

/** Every acknowledging method, each set up (untimed, its fsyncs released) and then called. */
const ACKNOWLEDGEMENTS: Record<string, (storage: SqliteStorage, disk: HeldDisk) => Promise<() => Promise<unknown>>> = {
  'session settle (a stored outcome)': async ({ sessionStore }) => {
    const record = pendingRecord();
    await sessionStore.create(record);
    return () => sessionStore.settle(record.sessionId, SUCCESS);
  },
  'payment claim':
    async ({ payments }) =>
    () =>
      payments.claim(pendingPayment(), RETENTION_MS),
  'payment finish': async ({ payments }, disk) => {
    const pending = pendingPayment();
    await releasing(disk, payments.claim(pending, RETENTION_MS));
    const { leaseExpiresAt: _lease, ...rest } = pending;
    return () => payments.finish({ ...rest, state: 'completed', providerStatus: 201 }, RETENTION_MS);
  },
  'payment release': async ({ payments }, disk) => {
    const pending = pendingPayment();
    await releasing(disk, payments.claim(pending, RETENTION_MS));
    return () => payments.release(pending.merchantTransactionId, pending.paymentId);
  },
  'payment expireLeases (one expired)': async ({ payments }, disk) => {
    await releasing(disk, payments.claim(pendingPayment(-1_000), RETENTION_MS));
    return () => payments.expireLeases(Date.now(), 10);
  },
  'removal record':
    async ({ removals }) =>
    () =>
      removals.record({ merchantUserId: 'u-1', accountId: 'sa_1', removedAt: new Date().toISOString() }),
  'removal forget': async ({ removals }, disk) => {
    await releasing(
      disk,
      removals.record({ merchantUserId: 'u-1', accountId: 'sa_2', removedAt: new Date().toISOString() }),
    );
    return () => removals.forget('u-1', 'sa_2');
  },
  'outbox append':
    async ({ eventOutbox }) =>
    () =>
      eventOutbox.append(event(), 1_000),
  'outbox acknowledge': async ({ eventOutbox }, disk) => {
    const recorded = event();
    await releasing(disk, eventOutbox.append(recorded, 1_000));
    return () => eventOutbox.acknowledge(recorded.id, 2_000);
  },
  'outbox redeliver': async ({ eventOutbox }, disk) => {
    const recorded = event();
    await releasing(disk, eventOutbox.append(recorded, 1_000));
    return () => eventOutbox.redeliver(recorded.id, 2_000);
  },
};

/** Awaits `promise`, releasing every fsync it starts. */
async function releasing<T>(disk: HeldDisk, promise: Promise<T>): Promise<T> {
  let done = false;
  void promise.finally(() => (done = true)).catch(() => undefined);
  const deadline = Date.now() + 5_000;
  while (!done && Date.now() < deadline) {
    for (const held of disk.held) held.release();
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return promise;
}

describe('SQLite: an acknowledgement waits for the fsync of its commit', () => {
  for (const [name, setUp] of Object.entries(ACKNOWLEDGEMENTS)) {
    test(`${name} stays unresolved while the WAL's fsync is held, and resolves once it is released`, async () => {
      await withHeldDisk(async (storage, disk) => {
        const call = await setUp(storage, disk);
        const before = disk.walSyncs;
        const acknowledged = call();
        const fsync = await disk.started(before + 1);
        assert.match(fsync.path, /obv-link\.sqlite-wal$/, 'the fsync is of the WAL file');
        assert.equal(await settledYet(acknowledged), false, 'resolved before its fsync completed');
        fsync.release();
        await acknowledged;
      });
    });
  }

  test('what acknowledges nothing never waits: a new session, an idempotency claim, a marker, a link session, a delivery result', async () => {
    await withHeldDisk(async (storage, disk) => {
      // An fsync held for something else is under way the whole time.
      const held = storage.payments.claim(pendingPayment(), RETENTION_MS);
      await disk.started(1);
      const record = pendingRecord();
      await storage.sessionStore.create(record);
      assert.deepEqual(await storage.sessionStore.claimIdempotencyKey('key-1', 60_000), { claimed: true });
      await storage.sessionStore.completeIdempotencyKey('key-1', record.sessionId, 60_000);
      assert.equal(await storage.sessionStore.mark('webhook:msg_1', record.sessionId, 60_000), record.sessionId);
      await storage.linkSessions.create(
        'link-1',
        { merchantUserId: 'u', merchantTransactionId: 'o', createdAt: 1, expiresAt: 2 },
        RETENTION_MS,
      );
      assert.equal(await storage.linkSessions.use('link-1', 5), true);
      await storage.eventOutbox.settle('no-such-event', { ok: true }, 1_000);
      assert.equal(await settledYet(held), false, 'the claim still waits');
      assert.equal(disk.walSyncs, 1, 'none of them asked for an fsync');
    });
  });

  test('reads show a stored outcome only once it is durable, so whatever goes with it is written first', async () => {
    await withHeldDisk(async (storage, disk) => {
      const record = pendingRecord();
      await storage.sessionStore.create(record);
      const settled = storage.sessionStore.settle(record.sessionId, SUCCESS);
      const fsync = await disk.started(1);
      // Committed, not yet durable: a page polling its session, or a merchant server, sees it pending.
      const meanwhile = await storage.sessionStore.get(record.sessionId);
      assert.deepEqual([meanwhile?.state, meanwhile?.outcome], ['pending', undefined]);
      // Found by its notification reference (a provider's retry), the same.
      assert.deepEqual(await storage.sessionStore.getByNotificationRef(record.notificationRef), meanwhile);
      // A second delivery of the outcome waits for the fsync after the first one's, then reports it.
      const again = storage.sessionStore.settle(record.sessionId, SUCCESS);
      fsync.release();
      assert.equal((await settled).stored, true);
      assert.equal((await storage.sessionStore.get(record.sessionId))?.state, 'succeeded');
      (await disk.started(2)).release();
      const second = await again;
      assert.deepEqual(
        [second.stored, second.record.state, second.record.outcome?.status],
        [false, 'succeeded', 'success'],
      );
    });
  });

  test("a notification's event is not delivered, read or listed before its outcome is durable", async () => {
    await withHeldDisk(async (storage, disk) => {
      const record = pendingRecord();
      await storage.sessionStore.create(record);
      const first = event();
      const appended = storage.eventOutbox.append(first, 1_000);
      (await disk.started(1)).release();
      await appended;
      const ended = event();
      const now = Date.now();
      const written = storage.sessionStore.recordOutcome({
        sessionId: record.sessionId,
        outcome: SUCCESS,
        webhook: { key: 'webhook:msg-durable', value: record.sessionId, ttlMs: RETENTION_MS },
        markers: [],
        ifStored: { event: ended },
        nowMs: now,
      });
      const fsync = await disk.started(2);
      // Committed with the notifications that arrived with it (write-batch.ts), not yet durable: reads see
      // the session as it was, by id and by notification reference.
      const states = async () =>
        [
          await storage.sessionStore.get(record.sessionId),
          await storage.sessionStore.getByNotificationRef(record.notificationRef),
        ].map((read) => read?.state);
      assert.deepEqual(await states(), ['pending', 'pending']);
      // Committed, not yet durable: the worker claims nothing of it, and the merchant's list stops before it.
      assert.deepEqual(await storage.eventOutbox.claimDue(now + 1, 1_000, 10), [
        { kind: 'deliver', eventId: first.id },
      ]);
      assert.equal(await storage.eventOutbox.get(ended.id), undefined);
      const listed = await storage.eventOutbox.list({ limit: 10 }, now);
      assert.deepEqual([listed?.events.map(({ event }) => event.id), listed?.hasMore], [[first.id], true]);
      assert.equal(await settledYet(written), false);
      fsync.release();
      assert.ok(!(await written).conflict);
      assert.deepEqual(await states(), ['succeeded', 'succeeded']);
      assert.equal((await storage.eventOutbox.get(ended.id))?.event.id, ended.id);
      assert.deepEqual(await storage.eventOutbox.claimDue(now + 1, 1_000, 10), [
        { kind: 'deliver', eventId: ended.id },
      ]);
      const after = await storage.eventOutbox.list({ limit: 10 }, now);
      assert.deepEqual(
        after?.events.map(({ event }) => event.id),
        [first.id, ended.id],
      );
    });
  });

  test('notifications written in one turn commit once, together (write-batch.ts), and each is acknowledged after the fsync that follows', async () => {
    await withHeldDisk(async (storage, disk) => {
      const wal = join(dirs.at(-1)!, `${DATABASE_FILE}-wal`);
      const records = Array.from({ length: 8 }, () => pendingRecord());
      for (const record of records) await storage.sessionStore.create(record);
      const events = records.map(() => event());
      const before = walCommits(wal);
      const now = Date.now();
      const written = records.map((record, index) =>
        storage.sessionStore.recordOutcome({
          sessionId: record.sessionId,
          outcome: SUCCESS,
          webhook: { key: `webhook:msg-group-${index}`, value: record.sessionId, ttlMs: RETENTION_MS },
          markers: [],
          ifStored: { event: events[index] },
          nowMs: now,
        }),
      );
      const fsync = await disk.started(1);
      assert.equal(walCommits(wal) - before, 1, 'one commit for the eight notifications');
      for (const pending of written)
        assert.equal(await settledYet(pending), false, 'none acknowledged before its fsync');
      for (const { id } of events)
        assert.equal(await storage.eventOutbox.get(id), undefined, 'each event hidden meanwhile');
      fsync.release();
      for (const pending of written) assert.equal((await pending).conflict, undefined);
      for (const record of records)
        assert.equal((await storage.sessionStore.get(record.sessionId))?.state, 'succeeded');
      for (const { id } of events) assert.equal((await storage.eventOutbox.get(id))?.event.id, id);
      assert.equal(disk.walSyncs, 1, 'one fsync for the eight');
    });
  });

  test('a notification refused for its webhook-id does not show the event another one waits to make durable', async () => {
    await withHeldDisk(async (storage, disk) => {
      const [record, other] = [pendingRecord(), pendingRecord()];
      for (const each of [record, other]) await storage.sessionStore.create(each);
      // A webhook-id already used for another session: a notification that reuses it is refused.
      await storage.sessionStore.mark('webhook:msg-used', other.sessionId, RETENTION_MS);
      const ended = event();
      const now = Date.now();
      const outcome = (key: string, withEvent: boolean) =>
        storage.sessionStore.recordOutcome({
          sessionId: record.sessionId,
          outcome: SUCCESS,
          webhook: { key, value: record.sessionId, ttlMs: RETENTION_MS },
          markers: [],
          ifStored: withEvent ? { event: ended } : {},
          nowMs: now,
        });
      const stored = outcome('webhook:msg-first', true);
      const fsync = await disk.started(1);
      assert.deepEqual(await outcome('webhook:msg-used', true), { conflict: true });
      // The first one's event is still waiting for its fsync: not shown, not claimed.
      assert.equal(await storage.eventOutbox.get(ended.id), undefined);
      assert.deepEqual(await storage.eventOutbox.claimDue(now + 1, 1_000, 10), []);
      fsync.release();
      assert.equal((await stored).conflict, undefined);
      assert.equal((await storage.eventOutbox.get(ended.id))?.event.id, ended.id);
    });
  });

  test('a payment claim resolves, and so lets the provider be called, only after its fsync; reads show each change only once durable', async () => {
    await withHeldDisk(async (storage, disk) => {
      const pending = pendingPayment();
      const order = pending.merchantTransactionId;
      let claimed = false;
      const claim = storage.payments.claim(pending, RETENTION_MS).then((result) => {
        claimed = true;
        return result;
      });
      const fsync = await disk.started(1);
      // Committed: a second claim of the order sees it at once and loses, but it is not acknowledged,
      // and GET /transactions does not show it yet.
      const rival = storage.payments.claim({ ...pendingPayment(), merchantTransactionId: order }, RETENTION_MS);
      assert.equal(await storage.payments.get(order), undefined);
      assert.equal(claimed, false);
      fsync.release();
      assert.deepEqual(await claim, { claimed: true });
      assert.equal((await storage.payments.get(order))?.state, 'pending');
      (await disk.started(2)).release();
      assert.deepEqual(await rival, { claimed: false, existing: pending });

      const { leaseExpiresAt: _lease, ...rest } = pending;
      const finishing = storage.payments.finish({ ...rest, state: 'completed', providerStatus: 201 }, RETENTION_MS);
      const finishSync = await disk.started(3);
      assert.equal((await storage.payments.get(order))?.state, 'pending', 'completed only once durable');
      finishSync.release();
      assert.equal(await finishing, true);
      assert.equal((await storage.payments.get(order))?.state, 'completed');
    });
  });
});

describe('SQLite: group commit', () => {
  test('one fsync serves every acknowledgement that arrived while the one before it ran', async () => {
    await withHeldDisk(async (storage, disk) => {
      const first = storage.eventOutbox.append(event(), 1_000);
      const firstSync = await disk.started(1);
      // Twenty acknowledgements of three kinds arrive while the first fsync runs.
      const records = Array.from({ length: 8 }, () => pendingRecord());
      for (const record of records) await storage.sessionStore.create(record);
      const waiting = [
        ...records.map((record) => storage.sessionStore.settle(record.sessionId, SUCCESS)),
        ...Array.from({ length: 6 }, () => storage.payments.claim(pendingPayment(), RETENTION_MS)),
        ...Array.from({ length: 6 }, () => storage.eventOutbox.append(event(), 1_000)),
      ];
      assert.equal(disk.walSyncs, 1, 'no second fsync while the first runs');
      firstSync.release();
      await first;
      const secondSync = await disk.started(2);
      assert.equal(
        await settledYet(Promise.all(waiting)),
        false,
        'they wait for the fsync after the one that began before them',
      );
      secondSync.release();
      await Promise.all(waiting);
      assert.equal(disk.walSyncs, 2, 'the twenty shared one fsync');
      assert.deepEqual(storage.handle.syncStats(), { fsyncs: 2, acknowledgements: 21 });
    });
  });

  test('a commit made while an fsync runs waits for the next one, even when the running one ends first', async () => {
    await withHeldDisk(async (storage, disk) => {
      const early = storage.removals.record({
        merchantUserId: 'u-1',
        accountId: 'sa_early',
        removedAt: new Date().toISOString(),
      });
      const running = await disk.started(1);
      const record = pendingRecord();
      await storage.sessionStore.create(record);
      const late = storage.sessionStore.settle(record.sessionId, SUCCESS);
      running.release();
      await early;
      assert.equal(await settledYet(late), false, 'the fsync that began before the commit does not count for it');
      const next = await disk.started(2);
      next.release();
      assert.equal((await late).stored, true);
    });
  });

  test("the directory is fsynced once, in the first round, so the files' names survive too", async () => {
    await withHeldDisk(async (storage, disk) => {
      for (let round = 1; round <= 3; round++) {
        const claim = storage.payments.claim(pendingPayment(), RETENTION_MS);
        (await disk.started(round)).release();
        await claim;
      }
      assert.deepEqual(disk.directorySyncs, [storage.handle.path.replace(/\/obv-link\.sqlite$/, '')]);
    });
  });

  test('a failed fsync fails the acknowledgements waiting for it and every later one, until a restart', async () => {
    await withHeldDisk(async (storage, disk) => {
      const claim = storage.payments.claim(pendingPayment(), RETENTION_MS);
      (await disk.started(1)).fail(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
      await assert.rejects(
        claim,
        (error: unknown) => error instanceof DurabilityError && /fsync of the SQLite WAL: EIO/.test(error.message),
      );
      // A later fsync might succeed without the pages the failed one dropped: nothing is acknowledged again.
      await assert.rejects(storage.eventOutbox.append(event(), 1_000), DurabilityError);
      assert.equal(disk.walSyncs, 1, 'no fsync is tried after a failure');
      // /readyz's write probe (a marker) fails too, so the instance reads as not ready until it restarts;
      // and a request that meets it is answered 503, the provider retrying elsewhere or later.
      await assert.rejects(storage.sessionStore.mark('probe', '1', 1), DurabilityError);
      const answer = toProblem(new DurabilityError('the disk failed'));
      assert.deepEqual(
        [answer.status, answer.slug, answer.headers()['retry-after'] !== undefined],
        [503, 'session-store-unavailable', true],
      );
    });
  });
});
