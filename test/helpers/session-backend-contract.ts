// Behaviour every SessionStore / ResultBus must have, as reusable node:test suites: the memory backend
// runs them in test/node/proxy/memory-backend.test.ts; the Redis backend can run the same ones.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../proxy/common/ids.ts';
import { browserOutcome, type ResultBus, type SessionEvent } from '../../proxy/storage/result-bus.ts';
import {
  type FailureOutcome,
  type SessionRecord,
  type SessionStore,
  type StoredOutcome,
} from '../../proxy/storage/sessions.ts';

export const SUCCESS: StoredOutcome = {
  status: 'success',
  linkRef: 'link-ref-0123456789abcdef',
  sealedAccountToken: 'obv1.k1.c2VhbGVkLWFjY3QtMQ',
  accountLabel: 'Checking ••••4321',
  fiName: 'Bank',
  fiAccountType: 'CHECKING',
};
export const FAILURE: FailureOutcome = { status: 'failure', code: 'ACCOUNT_LOCKED', message: 'locked' };

/** A fresh pending record expiring `ttlMs` from now. */
export function pendingRecord(ttlMs = 60_000, now = Date.now()): SessionRecord {
  return {
    sessionId: newId(),
    notificationRef: newId(),
    consumerUrl: 'https://bank.example/consumer/1?t=x',
    state: 'pending',
    createdAt: now,
    expiresAt: now + ttlMs,
    merchantUserId: 'u-1',
    merchantTransactionId: 't-1',
  };
}

/**
 * Registers the SessionStore contract. `makeStore` gets a fresh store per test; `close` is called for it.
 * Expiry is tested with a short real TTL (bounded waits), so stores need no injectable clock.
 */
export function describeSessionStoreContract(
  name: string,
  makeStore: () => Promise<SessionStore> | SessionStore,
): void {
  describe(`${name}: SessionStore contract`, () => {
    async function withStore(run: (store: SessionStore) => Promise<void>) {
      const store = await makeStore();
      try {
        await run(store);
      } finally {
        await store.close();
      }
    }

    test('returns a created record and finds it by notification reference', () =>
      withStore(async (store) => {
        const record = pendingRecord();
        await store.create(record);
        assert.deepEqual(await store.get(record.sessionId), record);
        assert.deepEqual(await store.getByNotificationRef(record.notificationRef), record);
        assert.equal(await store.get(newId()), undefined);
        assert.equal(await store.getByNotificationRef(newId()), undefined);
        // Read as `get` reads it: settled, it carries its outcome.
        await store.settle(record.sessionId, SUCCESS);
        assert.deepEqual(await store.getByNotificationRef(record.notificationRef), await store.get(record.sessionId));
        assert.equal((await store.getByNotificationRef(record.notificationRef))?.state, 'succeeded');
      }));

    test('stores only the first terminal outcome', () =>
      withStore(async (store) => {
        const record = pendingRecord();
        await store.create(record);
        const first = await store.settle(record.sessionId, FAILURE);
        assert.equal(first.stored, true);
        assert.equal(first.record.state, 'failed');
        const second = await store.settle(record.sessionId, SUCCESS);
        assert.equal(second.stored, false);
        assert.deepEqual(second.record.outcome, FAILURE);
        assert.deepEqual((await store.get(record.sessionId))?.outcome, FAILURE);
      }));

    test('lets exactly one of many concurrent settles win', () =>
      withStore(async (store) => {
        const record = pendingRecord();
        await store.create(record);
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => store.settle(record.sessionId, i % 2 ? SUCCESS : FAILURE)),
        );
        assert.equal(results.filter((r) => r.stored).length, 1);
      }));

    test('moves pending to returned, and nothing else', () =>
      withStore(async (store) => {
        const record = pendingRecord();
        await store.create(record);
        assert.equal((await store.markReturned(record.sessionId))?.state, 'returned');
        await store.settle(record.sessionId, SUCCESS);
        assert.equal((await store.markReturned(record.sessionId))?.state, 'succeeded');
        assert.equal(await store.markReturned(newId()), undefined);
      }));

    test('reports expired after the TTL and refuses to settle then', () =>
      withStore(async (store) => {
        const record = pendingRecord(150);
        await store.create(record);
        await new Promise((resolve) => setTimeout(resolve, 250));
        assert.equal((await store.get(record.sessionId))?.state, 'expired');
        const late = await store.settle(record.sessionId, SUCCESS);
        assert.equal(late.stored, false);
        assert.equal((await store.get(record.sessionId))?.outcome, undefined);
      }));

    test('keeps a settled outcome past the TTL', () =>
      withStore(async (store) => {
        const record = pendingRecord(150);
        await store.create(record);
        await store.settle(record.sessionId, SUCCESS);
        await new Promise((resolve) => setTimeout(resolve, 250));
        const after = await store.get(record.sessionId);
        assert.equal(after?.state, 'succeeded');
        assert.deepEqual(after?.outcome, SUCCESS);
      }));

    test("keeps a success's saved account and the record's saving fields (returning shoppers)", () =>
      withStore(async (store) => {
        const consent = {
          version: 'v1',
          lang: 'en' as const,
          checkbox: 'Save',
          text: 'You authorize…',
          acceptedAt: '2026-11-24T00:00:00.000Z',
          sealedClient: 'obv1.k1.Y2xpZW50',
        };
        const record = { ...pendingRecord(), saving: { accountId: 'sa_1', consent }, savedAccountId: 'sa_0' };
        const saved: StoredOutcome = {
          ...(SUCCESS as Extract<StoredOutcome, { status: 'success' }>),
          savedAccount: {
            sealed: 'obv1.k1.c2F2ZWQ',
            accountId: 'sa_1',
            accountLabel: 'Checking ••••4321',
            fiName: 'Bank',
            fiAccountType: 'CHECKING',
            linkedAt: '2026-11-24T00:00:00.000Z',
            consent,
          },
        };
        await store.create(record);
        await store.settle(record.sessionId, saved);
        const after = await store.get(record.sessionId);
        assert.deepEqual(after?.outcome, saved);
        assert.deepEqual([after?.saving, after?.savedAccountId], [record.saving, 'sa_0']);
      }));

    test('makes concurrent claims of one idempotency key wait for the first start', () =>
      withStore(async (store) => {
        const key = newId();
        assert.deepEqual(await store.claimIdempotencyKey(key, 60_000), { claimed: true });
        const waiting = Promise.all([store.claimIdempotencyKey(key, 60_000), store.claimIdempotencyKey(key, 60_000)]);
        await store.completeIdempotencyKey(key, 'session-1', 60_000);
        assert.deepEqual(await waiting, [
          { claimed: false, sessionId: 'session-1' },
          { claimed: false, sessionId: 'session-1' },
        ]);
        assert.deepEqual(await store.claimIdempotencyKey(key, 60_000), { claimed: false, sessionId: 'session-1' });
      }));

    test('wakes waiting claims without a session when the first start releases the key', () =>
      withStore(async (store) => {
        const key = newId();
        await store.claimIdempotencyKey(key, 60_000);
        const waiting = store.claimIdempotencyKey(key, 60_000);
        // The second claim must be waiting before the release: on PostgreSQL the two go out on separate pool
        // connections, so a release sent at once could land first and the claim would (rightly) take the key.
        await new Promise((resolve) => setTimeout(resolve, 100));
        await store.releaseIdempotencyKey(key);
        const woken = await waiting;
        assert.equal(woken.claimed, false);
        assert.equal('sessionId' in woken ? woken.sessionId : undefined, undefined);
        assert.deepEqual(await store.claimIdempotencyKey(key, 60_000), { claimed: true });
      }));

    test('a marker keeps its first value until it is removed', () =>
      withStore(async (store) => {
        const key = `webhook:msg_${newId()}`;
        assert.equal(await store.readMark(key), undefined);
        assert.equal(await store.mark(key, 'session-a', 60_000), 'session-a');
        assert.equal(await store.mark(key, 'session-b', 60_000), 'session-a');
        assert.equal(await store.readMark(key), 'session-a');
        await store.unmark(key);
        assert.equal(await store.readMark(key), undefined);
        assert.equal(await store.mark(key, 'session-b', 60_000), 'session-b');
      }));
  });
}

/** Registers the ResultBus contract. */
export function describeResultBusContract(name: string, makeBus: () => Promise<ResultBus> | ResultBus): void {
  describe(`${name}: ResultBus contract`, () => {
    /** Waits (bounded) until `events` has `count` entries: a bus may deliver asynchronously. */
    async function until(events: SessionEvent[], count: number) {
      for (let i = 0; i < 200 && events.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    }

    test("delivers an event only to that session's listeners", async () => {
      const bus = await makeBus();
      try {
        const a: SessionEvent[] = [];
        const b: SessionEvent[] = [];
        bus.subscribe('session-a', (event) => a.push(event));
        bus.subscribe('session-b', (event) => b.push(event));
        await new Promise((resolve) => setTimeout(resolve, 50)); // let a networked bus finish subscribing
        await bus.publish({ type: 'result', sessionId: 'session-a', outcome: browserOutcome(SUCCESS, undefined) });
        await until(a, 1);
        assert.deepEqual(a, [{ type: 'result', sessionId: 'session-a', outcome: browserOutcome(SUCCESS, undefined) }]);
        assert.deepEqual(b, []);
      } finally {
        await bus.close();
      }
    });

    test('stops delivering after unsubscribe', async () => {
      const bus = await makeBus();
      try {
        const kept: SessionEvent[] = [];
        const dropped: SessionEvent[] = [];
        bus.subscribe('session-c', (event) => kept.push(event));
        const unsubscribe = bus.subscribe('session-c', (event) => dropped.push(event));
        unsubscribe();
        await new Promise((resolve) => setTimeout(resolve, 50));
        await bus.publish({ type: 'expired', sessionId: 'session-c' });
        await until(kept, 1);
        assert.equal(kept.length, 1);
        assert.equal(dropped.length, 0);
      } finally {
        await bus.close();
      }
    });
  });
}
