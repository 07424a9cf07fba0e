// Behaviour every EventOutbox must have, as a reusable node:test suite: the memory outbox runs it in
// test/node/proxy/merchant-events.test.ts, the Redis outbox in test/node/redis/merchant-events.test.ts.
// Times are passed in (every method takes the caller's clock), so leases are tested without waiting.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { randomEventId } from '../../proxy/events/ids.ts';
import type { EventOutbox } from '../../proxy/events/outbox.ts';
import type { MerchantEvent } from '../../proxy/events/shapes.ts';

function event(index: number): MerchantEvent {
  return { id: randomEventId(), type: 'link.cancelled', createdAt: new Date(1_000 + index).toISOString(), data: { merchantTransactionId: `order-${index}` } };
}

/** `makeOutbox` gets a fresh, empty outbox per test. */
export function describeOutboxContract(name: string, makeOutbox: () => Promise<EventOutbox> | EventOutbox): void {
  describe(`${name}: EventOutbox contract`, () => {
    test('records an event once per id and queues its delivery at once', async () => {
      const outbox = await makeOutbox();
      const first = event(1);
      assert.equal(await outbox.append(first, 1_000), true);
      assert.equal(await outbox.append({ ...first, type: 'link.failed' }, 1_001), false);
      assert.deepEqual(await outbox.get(first.id), { event: first, body: JSON.stringify(first), attempts: 0, status: 'pending' });
      assert.deepEqual(await outbox.claimDue(1_000, 500, 10), [{ kind: 'deliver', eventId: first.id }]);
      assert.deepEqual(await outbox.backlog(), { pending: 1, oldestPendingAt: 1_000 });
    });

    test('leases a claimed job: nobody else gets it until the lease ends, then it comes back', async () => {
      const outbox = await makeOutbox();
      const first = event(1);
      await outbox.append(first, 1_000);
      assert.equal((await outbox.claimDue(1_000, 500, 10)).length, 1);
      assert.deepEqual(await outbox.claimDue(1_499, 500, 10), []);
      assert.deepEqual(await outbox.claimDue(1_500, 500, 10), [{ kind: 'deliver', eventId: first.id }]);
    });

    test('a failed attempt is counted and its job comes back when retried; a settled one never does', async () => {
      const outbox = await makeOutbox();
      const [first, second] = [event(1), event(2)];
      await outbox.append(first, 1_000);
      await outbox.append(second, 1_000);
      await outbox.claimDue(1_000, 500, 10);
      await outbox.retryAt(first.id, 1_100);
      await outbox.settle(second.id, 'delivered');
      assert.equal((await outbox.get(first.id))?.attempts, 1);
      assert.equal((await outbox.get(second.id))?.status, 'delivered');
      assert.deepEqual(await outbox.claimDue(1_100, 500, 10), [{ kind: 'deliver', eventId: first.id }]);
      assert.deepEqual(await outbox.claimDue(10_000, 500, 10), [{ kind: 'deliver', eventId: first.id }]);
      await outbox.settle(first.id, 'failed');
      assert.deepEqual(await outbox.claimDue(20_000, 500, 10), []);
      assert.deepEqual(await outbox.backlog(), { pending: 0, oldestPendingAt: undefined });
      assert.equal((await outbox.get(first.id))?.status, 'failed');
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
      await outbox.finishSessionCheck('session-a');
      assert.deepEqual(await outbox.claimDue(60_000, 500, 10), []);
    });

    test('lists in the order recorded, after an id, a page at a time; an unknown id is undefined', async () => {
      const outbox = await makeOutbox();
      const events = [event(1), event(2), event(3), event(4)];
      for (const e of events) await outbox.append(e, 1_000);
      assert.deepEqual(await outbox.list(undefined, 10, 1_000), { events, hasMore: false });
      assert.deepEqual(await outbox.list(undefined, 2, 1_000), { events: events.slice(0, 2), hasMore: true });
      assert.deepEqual(await outbox.list(events[1]!.id, 2, 1_000), { events: events.slice(2), hasMore: false });
      assert.deepEqual(await outbox.list(events[3]!.id, 2, 1_000), { events: [], hasMore: false });
      assert.equal(await outbox.list(randomEventId(), 2, 1_000), undefined);
    });
  });
}
