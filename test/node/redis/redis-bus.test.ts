// The Redis ResultBus against a real redis-server: two buses stand in for two proxy instances.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { SessionBackendUnavailableError } from '../../../proxy/storage/errors.ts';
import { openRedisStorage, type RedisStorage } from '../../../proxy/storage/redis/storage.ts';
import { openRedisResultBus, type RedisResultBus } from '../../../proxy/storage/redis/bus.ts';
import type { SessionEvent } from '../../../proxy/storage/result-bus.ts';
import { redisSkipReason, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';
import {
  FAILURE,
  FAILURE_VIEW,
  SUCCESS,
  SUCCESS_VIEW,
  eventually,
  inspector,
  pendingRecord,
  randomId,
} from './support.ts';

const skip = redisSkipReason();

/** Collects the events one subscription receives. */
function collect(bus: RedisResultBus, sessionId: string): { events: SessionEvent[]; unsubscribe: () => void } {
  const events: SessionEvent[] = [];
  const unsubscribe = bus.subscribe(sessionId, (event) => events.push(event));
  return { events, unsubscribe };
}

/** Publishes a marker event on `bus` and waits until `sink` received it: everything before it arrived too. */
async function flush(bus: RedisResultBus, sink: RedisResultBus): Promise<void> {
  const marker = randomId();
  const { events, unsubscribe } = collect(sink, marker);
  await bus.publish({ type: 'state', sessionId: marker, state: 'returned' });
  await eventually(() => (events.length > 0 ? true : undefined));
  unsubscribe();
}

describe('Redis result bus', { skip }, () => {
  let server: RedisServer;
  let busA: RedisResultBus;
  let busB: RedisResultBus;
  let raw: Redis;

  before(async () => {
    server = await startRedisServer();
    busA = await openRedisResultBus({ url: server.url });
    busB = await openRedisResultBus({ url: server.url });
    raw = inspector(server.url);
  });

  after(async () => {
    await busA?.close();
    await busB?.close();
    raw?.disconnect();
    await server?.close();
  });

  it('delivers an event published on one instance to a subscriber on the other', async () => {
    const sessionId = randomId();
    const { events } = collect(busB, sessionId);
    const event: SessionEvent = { type: 'result', sessionId, outcome: SUCCESS_VIEW };
    await busA.publish(event);
    await eventually(() => events[0]);
    assert.deepEqual(events, [event]);
  });

  it('delivers to every subscriber of the session and to no other session', async () => {
    const sessionId = randomId();
    const first = collect(busB, sessionId);
    const second = collect(busB, sessionId);
    const other = collect(busB, randomId());
    await busA.publish({ type: 'state', sessionId, state: 'returned' });
    await flush(busA, busB);
    assert.equal(first.events.length, 1);
    assert.equal(second.events.length, 1);
    assert.equal(other.events.length, 0);
  });

  it('stops delivering after unsubscribe and forgets the session', async () => {
    const sessionId = randomId();
    const before = busB.sessionCount;
    const { events, unsubscribe } = collect(busB, sessionId);
    assert.equal(busB.sessionCount, before + 1);
    unsubscribe();
    unsubscribe();
    assert.equal(busB.sessionCount, before);
    await busA.publish({ type: 'expired', sessionId });
    await flush(busA, busB);
    assert.deepEqual(events, []);
  });

  it('gives a subscription at most one terminal event', async () => {
    const sessionId = randomId();
    const { events } = collect(busB, sessionId);
    await busA.publish({ type: 'state', sessionId, state: 'returned' });
    await busA.publish({ type: 'result', sessionId, outcome: FAILURE_VIEW });
    await busA.publish({ type: 'result', sessionId, outcome: SUCCESS_VIEW });
    await busA.publish({ type: 'expired', sessionId });
    await flush(busA, busB);
    assert.deepEqual(
      events.map((e) => e.type),
      ['state', 'result'],
    );
    assert.deepEqual(events[1], { type: 'result', sessionId, outcome: FAILURE_VIEW });
  });

  it('ignores malformed messages on the channel and keeps delivering', async () => {
    const sessionId = randomId();
    const { events } = collect(busB, sessionId);
    const channel = 'obv:events';
    await raw.publish(channel, 'not json');
    await raw.publish(channel, JSON.stringify({ type: 'result', sessionId, outcome: { status: 'maybe' } }));
    await raw.publish(channel, JSON.stringify({ type: 'shutdown' }));
    // A result carrying an accountToken is not a browser's to see: the channel never relays one.
    await raw.publish(channel, JSON.stringify({ type: 'result', sessionId, outcome: SUCCESS }));
    await busA.publish({ type: 'expired', sessionId });
    await eventually(() => events[0]);
    assert.deepEqual(events, [{ type: 'expired', sessionId }]);
  });

  it('keeps delivering to other listeners when one throws', async () => {
    const sessionId = randomId();
    busB.subscribe(sessionId, () => {
      throw new Error('listener bug');
    });
    const { events } = collect(busB, sessionId);
    await busA.publish({ type: 'expired', sessionId });
    await eventually(() => events[0]);
    assert.equal(events.length, 1);
  });

  it('uses one subscribed channel per instance, however many sessions are open', async () => {
    const unsubscribes = Array.from({ length: 50 }, () => collect(busB, randomId()).unsubscribe);
    const channels = (await raw.call('PUBSUB', 'CHANNELS', 'obv:*')) as string[];
    assert.deepEqual(channels, ['obv:events']);
    for (const unsubscribe of unsubscribes) unsubscribe();
  });
});

describe('Redis result bus across a Redis restart', { skip }, () => {
  let server: RedisServer;
  let a: RedisStorage;
  let b: RedisStorage;
  let raw: Redis;

  before(async () => {
    server = await startRedisServer({ persistent: true });
    const options = { url: server.url, maxReconnectDelayMs: 100 };
    a = await openRedisStorage(options);
    b = await openRedisStorage(options);
    raw = inspector(server.url);
  });

  after(async () => {
    await a?.close();
    await b?.close();
    raw?.disconnect();
    await server?.close();
  });

  it('rejects publish while Redis is down', async () => {
    await server.stop('SIGKILL');
    try {
      await assert.rejects(
        a.resultBus.publish({ type: 'expired', sessionId: randomId() }),
        SessionBackendUnavailableError,
      );
    } finally {
      await server.start();
    }
    await eventually(() => a.sessionStore.get(randomId()).then(() => true));
  });

  it('delivers an outcome whose message it missed while its subscriber connection was down', async () => {
    const record = pendingRecord();
    await a.sessionStore.create(record);
    const { events } = collect(b.resultBus, record.sessionId);
    // Stored but never published (as if the message went out while B was disconnected)…
    await a.sessionStore.settle(record.sessionId, SUCCESS);
    // …then B's subscriber connection drops and comes back: it re-reads the store.
    await raw.client('KILL', 'TYPE', 'pubsub');
    await eventually(() => events[0]);
    assert.deepEqual(events, [{ type: 'result', sessionId: record.sessionId, outcome: SUCCESS_VIEW }]);
  });

  it('re-subscribes after Redis restarts and delivers the outcome settled afterwards', async () => {
    const record = pendingRecord();
    await a.sessionStore.create(record);
    const { events } = collect(b.resultBus, record.sessionId);
    await server.stop('SIGKILL');
    await server.start();
    // Settle-then-publish as the notification route does, retried until A's connection is back.
    await eventually(async () => {
      await a.sessionStore.settle(record.sessionId, FAILURE);
      await a.resultBus.publish({ type: 'result', sessionId: record.sessionId, outcome: FAILURE_VIEW });
      return true;
    });
    await eventually(() => events[0]);
    assert.deepEqual(events, [{ type: 'result', sessionId: record.sessionId, outcome: FAILURE_VIEW }]);
    // And live messages flow again: the subscription itself is back, not only the catch-up.
    await flush(a.resultBus, b.resultBus);
  });
});
