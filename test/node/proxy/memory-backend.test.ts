// The in-memory session backend against the shared SessionStore / ResultBus contract, plus sweeping.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryResultBus } from '../../../proxy/storage/memory/bus.ts';
import { MemorySessionStore } from '../../../proxy/storage/memory/session-store.ts';
import {
  describeResultBusContract,
  describeSessionStoreContract,
  pendingRecord,
} from '../../helpers/session-backend-contract.ts';

describeSessionStoreContract('memory', () => new MemorySessionStore());
describeResultBusContract('memory', () => new MemoryResultBus());

test('sweeps a record once its retention after expiry has passed', async () => {
  let now = 1_000_000;
  const store = new MemorySessionStore({ graceMs: 1_000, now: () => now });
  const record = pendingRecord(500, now);
  await store.create(record);
  now += 1_000;
  store.sweep();
  assert.equal((await store.get(record.sessionId))?.state, 'expired', 'kept during retention');
  now += 1_000;
  store.sweep();
  assert.equal(await store.get(record.sessionId), undefined);
  assert.equal(await store.getByNotificationRef(record.notificationRef), undefined);
  await store.close();
});

test('returns copies, so a caller cannot change a stored record', async () => {
  const store = new MemorySessionStore();
  const record = pendingRecord();
  await store.create(record);
  const copy = await store.get(record.sessionId);
  assert.ok(copy);
  copy.state = 'succeeded';
  assert.equal((await store.get(record.sessionId))?.state, 'pending');
  await store.close();
});
