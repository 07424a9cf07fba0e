// Behaviour every EventOutbox must have, as a reusable node:test suite: the memory outbox runs it in
// test/node/proxy/merchant-events.test.ts, the Redis outbox in test/node/redis/merchant-events.test.ts
// (a real redis-server), the SQLite one in test/node/storage/backends.test.ts (a real file).
// Times are passed in (every method takes the caller's clock), so leases are tested without waiting.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { randomEventId } from '../../proxy/events/ids.ts';
import type { EventOutbox, ListQuery } from '../../proxy/storage/outbox.ts';
import type { MerchantEvent } from '../../proxy/storage/events.ts';

function event(index: number): MerchantEvent {
  return {
    id: randomEventId(),
    type: 'link.cancelled',
    createdAt: new Date(1_000 + index).toISOString(),
    data: { merchantTransactionId: `order-${index}` },
  };
}

const ids4 = (events: MerchantEvent[]) => events.map((e) => e.id);

/** `makeOutbox` gets a fresh, empty outbox per test. */
export function describeOutboxContract(name: string, makeOutbox: () => Promise<EventOutbox> | EventOutbox): void {
  describe(`${name}: EventOutbox contract`, () => {
    test('records an event once per id and queues its delivery at once', async () => {
      const outbox = await makeOutbox();
      const first = event(1);
      assert.equal(await outbox.append(first, 1_000), true);
      assert.equal(
        await outbox.append(
          { ...first, type: 'link.failed', data: { code: 'X', message: 'Another event under the same id.' } },
          1_001,
        ),
        false,
      );
      assert.deepEqual(await outbox.get(first.id), {
        event: first,
        body: JSON.stringify(first),
        delivery: { state: 'pending', attempts: 0, nextAttemptAt: 1_000 },
      });
      assert.deepEqual(await outbox.claimDue(1_000, 500, 10), [{ kind: 'deliver', eventId: first.id }]);
      assert.deepEqual(await outbox.backlog(), { pending: 1, oldestPendingAt: 1_000 });
      assert.equal(await outbox.get(randomEventId()), undefined);
    });

    test('leases a claimed job: nobody else gets it until the lease ends, then it comes back', async () => {
      const outbox = await makeOutbox();
      const first = event(1);
      await outbox.append(first, 1_000);
      assert.equal((await outbox.claimDue(1_000, 500, 10)).length, 1);
      assert.deepEqual(await outbox.claimDue(1_499, 500, 10), []);
      assert.deepEqual(await outbox.claimDue(1_500, 500, 10), [{ kind: 'deliver', eventId: first.id }]);
    });

    test('a failed attempt is counted with its reason and its job comes back when retried; a settled one never does', async () => {
      const outbox = await makeOutbox();
      const [first, second] = [event(1), event(2)];
      await outbox.append(first, 1_000);
      await outbox.append(second, 1_000);
      await outbox.claimDue(1_000, 500, 10);
      await outbox.retryAt(first.id, 'answered 500', 1_010, 1_100);
      await outbox.settle(second.id, { ok: true }, 1_020);
      assert.deepEqual((await outbox.get(first.id))?.delivery, {
        state: 'pending',
        attempts: 1,
        nextAttemptAt: 1_100,
        lastAttemptAt: 1_010,
        lastError: 'answered 500',
      });
      assert.deepEqual((await outbox.get(second.id))?.delivery, {
        state: 'delivered',
        attempts: 1,
        deliveredAt: 1_020,
        acknowledgedBy: 'endpoint',
        lastAttemptAt: 1_020,
      });
      assert.deepEqual(await outbox.claimDue(1_100, 500, 10), [{ kind: 'deliver', eventId: first.id }]);
      assert.deepEqual(await outbox.claimDue(10_000, 500, 10), [{ kind: 'deliver', eventId: first.id }]);
      await outbox.settle(first.id, { ok: false, error: 'connection failed (ECONNREFUSED)' }, 10_050);
      assert.deepEqual(await outbox.claimDue(20_000, 500, 10), []);
      assert.deepEqual(await outbox.backlog(), { pending: 0, oldestPendingAt: undefined });
      assert.deepEqual((await outbox.get(first.id))?.delivery, {
        state: 'failed',
        attempts: 2,
        lastAttemptAt: 10_050,
        lastError: 'connection failed (ECONNREFUSED)',
      });
    });

    test('claims at most the number asked for', async () => {
      const outbox = await makeOutbox();
      for (let i = 0; i < 5; i++) await outbox.append(event(i), 1_000);
      assert.equal((await outbox.claimDue(1_000, 500, 3)).length, 3);
      assert.equal((await outbox.claimDue(1_000, 500, 3)).length, 2);
    });

    test('schedules one session check per session, due at its time, postponed or finished', async () => {
      const outbox = await makeOutbox();
      await outbox.scheduleSessionCheck('session-a', 5_000);
      await outbox.scheduleSessionCheck('session-a', 1_000);
      assert.deepEqual(await outbox.claimDue(4_999, 500, 10), []);
      const job = { kind: 'session-check', sessionId: 'session-a' } as const;
      assert.deepEqual(await outbox.claimDue(5_000, 500, 10), [job]);
      await outbox.postpone(job, 6_000);
      assert.deepEqual(await outbox.claimDue(6_000, 500, 10), [job]);
      await outbox.finishJob(job);
      assert.deepEqual(await outbox.claimDue(60_000, 500, 10), []);
    });

    test('lists in the order recorded, after an id, a page at a time; an unknown id is undefined', async () => {
      const outbox = await makeOutbox();
      const events = [event(1), event(2), event(3), event(4)];
      for (const e of events) await outbox.append(e, 1_000);
      const ids = async (query: ListQuery) =>
        (await outbox.list(query, 1_000))?.events.map((stored) => stored.event.id);
      const page = await outbox.list({ limit: 10 }, 1_000);
      assert.deepEqual(
        page?.events.map((stored) => stored.event),
        events,
      );
      assert.equal(page?.hasMore, false);
      assert.deepEqual(page?.events[0]?.delivery, { state: 'pending', attempts: 0, nextAttemptAt: 1_000 });
      assert.deepEqual(await ids({ limit: 2 }), ids4(events).slice(0, 2));
      assert.equal((await outbox.list({ limit: 2 }, 1_000))?.hasMore, true);
      assert.deepEqual(
        await outbox
          .list({ after: events[1]!.id, limit: 2 }, 1_000)
          .then((p) => [p?.events.map((e) => e.event.id), p?.hasMore]),
        [ids4(events).slice(2), false],
      );
      assert.deepEqual(await ids({ after: events[3]!.id, limit: 2 }), []);
      assert.equal(await outbox.list({ after: randomEventId(), limit: 2 }, 1_000), undefined);
    });

    test('lists what is not delivered in the order recorded, whatever order the deliveries ended in; the cursor is any event', async () => {
      const outbox = await makeOutbox();
      const [a, b, c, d, e] = [event(1), event(2), event(3), event(4), event(5)];
      for (const each of [a, b, c, d, e]) await outbox.append(each, 1_000);
      // Later events go through first: e and c delivered, b given up, a and d still pending.
      await outbox.settle(e.id, { ok: true }, 1_010);
      await outbox.settle(c.id, { ok: true }, 1_020);
      await outbox.settle(b.id, { ok: false, error: 'answered 503' }, 1_030);
      const ids = async (query: ListQuery) =>
        (await outbox.list(query, 1_100))?.events.map((stored) => stored.event.id);
      assert.deepEqual(await ids({ limit: 10, delivery: 'undelivered' }), [a.id, b.id, d.id]);
      assert.deepEqual(await ids({ limit: 10, delivery: 'pending' }), [a.id, d.id]);
      assert.deepEqual(await ids({ limit: 10, delivery: 'failed' }), [b.id]);
      // Paging: the cursor is a place in the recording order, whether or not its event is in the filter.
      const first = await outbox.list({ limit: 2, delivery: 'undelivered' }, 1_100);
      assert.deepEqual([first?.events.map((stored) => stored.event.id), first?.hasMore], [[a.id, b.id], true]);
      assert.deepEqual(await ids({ after: b.id, limit: 2, delivery: 'undelivered' }), [d.id]);
      assert.deepEqual(await ids({ after: c.id, limit: 10, delivery: 'undelivered' }), [d.id]);
      assert.deepEqual(await ids({ after: a.id, limit: 1, delivery: 'pending' }), [d.id]);
      assert.deepEqual(await ids({ after: d.id, limit: 10, delivery: 'undelivered' }), []);
      assert.equal(await outbox.list({ after: randomEventId(), limit: 10, delivery: 'pending' }, 1_100), undefined);
    });

    test('an acknowledged event is delivered by the API and never attempted again; acknowledging twice changes nothing', async () => {
      const outbox = await makeOutbox();
      const [pending, failed, delivered] = [event(1), event(2), event(3)];
      for (const each of [pending, failed, delivered]) await outbox.append(each, 1_000);
      await outbox.claimDue(1_000, 500, 10);
      await outbox.retryAt(pending.id, 'answered 500', 1_010, 5_000);
      await outbox.settle(failed.id, { ok: false, error: 'answered 500' }, 1_010);
      await outbox.settle(delivered.id, { ok: true }, 1_010);

      const acknowledged = await outbox.acknowledge(pending.id, 2_000);
      assert.deepEqual(acknowledged, {
        event: pending,
        body: JSON.stringify(pending),
        delivery: {
          state: 'delivered',
          attempts: 1,
          deliveredAt: 2_000,
          acknowledgedBy: 'api',
          lastAttemptAt: 1_010,
          lastError: 'answered 500',
        },
      });
      assert.deepEqual(await outbox.acknowledge(pending.id, 3_000), acknowledged, 'idempotent');
      assert.deepEqual(await outbox.claimDue(60_000, 500, 10), [], 'its retry is gone');
      assert.deepEqual(await outbox.backlog(), { pending: 0, oldestPendingAt: undefined });
      // An attempt that was under way when it was acknowledged changes nothing when it ends.
      await outbox.retryAt(pending.id, 'answered 500', 3_000, 4_000);
      await outbox.settle(pending.id, { ok: false, error: 'answered 500' }, 3_000);
      assert.deepEqual(await outbox.get(pending.id), acknowledged);
      assert.deepEqual(await outbox.claimDue(60_000, 500, 10), []);

      assert.deepEqual((await outbox.acknowledge(failed.id, 2_000))?.delivery, {
        state: 'delivered',
        attempts: 1,
        deliveredAt: 2_000,
        acknowledgedBy: 'api',
        lastAttemptAt: 1_010,
        lastError: 'answered 500',
      });
      assert.deepEqual(
        (await outbox.acknowledge(delivered.id, 2_000))?.delivery,
        { state: 'delivered', attempts: 1, deliveredAt: 1_010, acknowledgedBy: 'endpoint', lastAttemptAt: 1_010 },
        'delivered by the endpoint stays so',
      );
      assert.deepEqual((await outbox.list({ limit: 10, delivery: 'undelivered' }, 2_000))?.events, []);
      assert.equal(await outbox.acknowledge(randomEventId(), 2_000), undefined);
    });

    test('a redelivery is one attempt now: a settled event starts a new delivery, a pending one is hurried, asking twice changes nothing', async () => {
      const outbox = await makeOutbox();
      const [delivered, failed, waiting] = [event(1), event(2), event(3)];
      for (const each of [delivered, failed, waiting]) await outbox.append(each, 1_000);
      await outbox.claimDue(1_000, 500, 10);
      await outbox.settle(delivered.id, { ok: true }, 1_010);
      await outbox.settle(failed.id, { ok: false, error: 'answered 500' }, 1_010);
      await outbox.retryAt(waiting.id, 'answered 500', 1_010, 90_000);

      const again = await outbox.redeliver(delivered.id, 2_000);
      assert.deepEqual(again, {
        event: delivered,
        body: JSON.stringify(delivered),
        delivery: { state: 'pending', attempts: 0, nextAttemptAt: 2_000 },
      });
      assert.deepEqual(
        await outbox.redeliver(delivered.id, 2_100),
        again,
        'an attempt is already due: nothing changes',
      );
      assert.deepEqual((await outbox.redeliver(failed.id, 2_000))?.delivery, {
        state: 'pending',
        attempts: 0,
        nextAttemptAt: 2_000,
      });
      assert.deepEqual(
        (await outbox.redeliver(waiting.id, 2_000))?.delivery,
        { state: 'pending', attempts: 1, nextAttemptAt: 2_000, lastAttemptAt: 1_010, lastError: 'answered 500' },
        'the next attempt moves to now',
      );
      const due = await outbox.claimDue(2_100, 500, 10);
      assert.deepEqual(
        due.map((job) => job.kind === 'deliver' && job.eventId).sort(),
        [delivered.id, failed.id, waiting.id].sort(),
      );
      // Under way (claimed): asking again does not start a second attempt beside it.
      await outbox.redeliver(delivered.id, 2_200);
      assert.deepEqual(await outbox.claimDue(2_300, 500, 10), []);
      assert.deepEqual(
        await outbox.backlog(),
        { pending: 3, oldestPendingAt: 1_000 },
        'waiting has been pending since it was recorded',
      );
      assert.deepEqual((await outbox.list({ limit: 10, delivery: 'failed' }, 2_300))?.events, []);
      assert.deepEqual(
        (await outbox.list({ limit: 10, delivery: 'pending' }, 2_300))?.events.map((stored) => stored.event.id),
        [delivered.id, failed.id, waiting.id],
      );
      // The new delivery counts its own attempts.
      await outbox.settle(delivered.id, { ok: true }, 2_400);
      assert.deepEqual((await outbox.get(delivered.id))?.delivery, {
        state: 'delivered',
        attempts: 1,
        deliveredAt: 2_400,
        acknowledgedBy: 'endpoint',
        lastAttemptAt: 2_400,
      });
      assert.equal(await outbox.redeliver(randomEventId(), 2_000), undefined);
    });
  });
}
