// Building the Redis backend: synchronously (as createSessionBackend does) and when Redis is missing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRedisStorage, openRedisStorage } from '../../../proxy/storage/redis/storage.ts';
import { redisSkipReason, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';
import { SUCCESS, SUCCESS_VIEW, eventually, pendingRecord } from './support.ts';

const skip = redisSkipReason();

describe('Redis backend', { skip }, () => {
  let server: RedisServer;

  before(async () => {
    server = await startRedisServer();
  });

  after(async () => {
    await server?.close();
  });

  it('serves commands issued right after a synchronous build, before the first connect', async () => {
    const backend = createRedisStorage({ url: server.url });
    try {
      const record = pendingRecord();
      // No await on ready(): these wait for the first connect instead of failing.
      await backend.sessionStore.create(record);
      assert.equal((await backend.sessionStore.settle(record.sessionId, SUCCESS)).stored, true);
    } finally {
      await backend.close();
    }
  });

  it('delivers to a subscriber registered before the subscription was live', async () => {
    const backend = createRedisStorage({ url: server.url });
    try {
      const record = pendingRecord();
      const events: unknown[] = [];
      backend.resultBus.subscribe(record.sessionId, (event) => events.push(event));
      // Store then publish, as the notification route does, without waiting for anything: the publish
      // may go out before the subscription is live, and then the catch-up after subscribing delivers.
      await backend.sessionStore.create(record);
      await backend.sessionStore.settle(record.sessionId, SUCCESS);
      await backend.resultBus.publish({ type: 'result', sessionId: record.sessionId, outcome: SUCCESS_VIEW });
      await eventually(() => events[0]);
      await backend.ready();
      assert.deepEqual(events, [{ type: 'result', sessionId: record.sessionId, outcome: SUCCESS_VIEW }]);
    } finally {
      await backend.close();
    }
  });

  it('fails to open when Redis is unreachable, and leaves no connection retrying', async () => {
    const stopped = await startRedisServer();
    await stopped.close();
    await assert.rejects(openRedisStorage({ url: stopped.url }, 300), /not ready/);
  });

  it('rejects a URL that is not redis:// or rediss://', () => {
    assert.throws(() => createRedisStorage({ url: 'http://127.0.0.1:6379' }), TypeError);
    assert.throws(() => createRedisStorage({ url: 'not a url' }), TypeError);
  });
});
