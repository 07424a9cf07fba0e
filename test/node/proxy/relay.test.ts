// The WebSocket relay: who may connect, the subscribe handshake, expiry, heartbeats and clean-up.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { SessionBackendUnavailableError } from '../../../proxy/storage/errors.ts';
import { MemoryResultBus } from '../../../proxy/storage/memory/bus.ts';
import { MemorySessionStore } from '../../../proxy/storage/memory/session-store.ts';
import { browserOutcome, type SessionEvent } from '../../../proxy/storage/result-bus.ts';
import { type SessionRecord } from '../../../proxy/storage/sessions.ts';
import { SUCCESS } from '../../helpers/session-backend-contract.ts';
import { startProxyPair, startProxyPairWithBackend, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { connectRelay, subscribedRelay } from '../../helpers/relay-client.ts';
import { postNotification, successPayload } from '../../helpers/webhooks.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

describe('relay handshake', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair({
      proxy: { allowedOrigins: ['https://shop.example'], relay: { subscribeTimeoutMs: 200 } },
    });
  });
  after(() => pair.close());

  test('refuses an upgrade from a disallowed origin with 403', async () => {
    await assert.rejects(
      connectRelay(pair.wsUrl, { origin: 'https://evil.example' }),
      /Unexpected server response: 403/,
    );
    const refusals = pair.logs.find('not allowed');
    assert.ok(refusals.length > 0);
    assert.match(String(refusals[0]?.msg), /OBV_ALLOWED_ORIGINS/);
  });

  test('refuses an upgrade without an Origin header', async () => {
    await assert.rejects(connectRelay(pair.wsUrl), /Unexpected server response: 403/);
  });

  test('accepts an upgrade from an allowed cross origin', async () => {
    const client = await connectRelay(pair.wsUrl, { origin: 'https://shop.example' });
    client.close();
    await client.closed;
  });

  test('refuses an upgrade on another path with 404', async () => {
    await assert.rejects(
      connectRelay(`${pair.wsUrl}-other`, { origin: pair.origin }),
      /Unexpected server response: 404/,
    );
  });

  test('closes with 4400 and an error message when the first message is not a subscribe', async () => {
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send('{"type":"hello"}');
    const error = await client.next();
    assert.equal(error.type, 'error');
    assert.equal(error.code, 'bad_message');
    assert.equal((await client.closed).code, 4400);
  });

  test('closes with 4400 when the first message is not JSON', async () => {
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send('subscribe please');
    assert.equal((await client.closed).code, 4400);
  });

  test('closes with 4404 for an unknown session', async () => {
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId: 'AAAAAAAAAAAAAAAAAAAAAA' });
    assert.equal((await client.next()).code, 'unknown_session');
    assert.equal((await client.closed).code, 4404);
  });

  test('takes the session id only from the first message, never from the URL', async () => {
    const { sessionId } = await pair.startVerification();
    await postNotification(await pair.notificationUrl(sessionId), successPayload('acct-query'));
    const client = await connectRelay(`${pair.wsUrl}?sessionId=${sessionId}`, { origin: pair.origin });
    assert.equal((await client.closed).code, 4408);
    assert.deepEqual(client.messages, []);
  });

  test('closes a socket that never subscribes', async () => {
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    assert.equal((await client.closed).code, 4408);
  });

  test('closes a socket that sends more than the message size limit', async () => {
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId: 'x'.repeat(2_000) });
    assert.equal((await client.closed).code, 1009);
  });

  test('ignores messages after the subscription', async () => {
    const { sessionId } = await pair.startVerification();
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId });
    await client.next((message) => message.type === 'subscribed');
    client.send('garbage');
    client.send({ type: 'subscribe', sessionId: 'AAAAAAAAAAAAAAAAAAAAAA' });
    await postNotification(await pair.notificationUrl(sessionId), successPayload('acct-after-garbage'));
    const result = await client.next((message) => message.type === 'result');
    assert.equal(result.sessionId, sessionId);
    assert.equal(client.messages.filter((message) => message.type === 'error').length, 0);
  });

  test('answers an id that cannot exist as unknown without subscribing to the bus for it', async () => {
    const bus = pair.bus;
    const subscribedIds: string[] = [];
    const subscribe = bus.subscribe.bind(bus);
    bus.subscribe = (sessionId, listener) => {
      subscribedIds.push(sessionId);
      return subscribe(sessionId, listener);
    };
    try {
      const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
      client.send({ type: 'subscribe', sessionId: 'not an id!' });
      assert.equal((await client.next()).code, 'unknown_session');
      assert.equal((await client.closed).code, 4404);
      // The same path with a well-formed id does subscribe, so the spy is in the right place.
      const known = await connectRelay(pair.wsUrl, { origin: pair.origin });
      known.send({ type: 'subscribe', sessionId: 'AAAAAAAAAAAAAAAAAAAAAA' });
      assert.equal((await known.closed).code, 4404);
    } finally {
      bus.subscribe = subscribe;
    }
    assert.deepEqual(subscribedIds, ['AAAAAAAAAAAAAAAAAAAAAA']);
  });

  test("forgets a session's bus subscription once its sockets are gone", async () => {
    assert.ok(pair.bus instanceof MemoryResultBus);
    const { sessionId } = await pair.startVerification();
    const sockets = await Promise.all([1, 2, 3].map(() => connectRelay(pair.wsUrl, { origin: pair.origin })));
    for (const socket of sockets) socket.send({ type: 'subscribe', sessionId });
    await Promise.all(sockets.map((socket) => socket.next((message) => message.type === 'subscribed')));
    assert.equal(pair.bus.sessionCount, 1);
    await postNotification(await pair.notificationUrl(sessionId), successPayload());
    for (const socket of sockets) {
      await socket.next((message) => message.type === 'result');
      await socket.closed;
    }
    for (let i = 0; i < 100 && pair.bus.sessionCount > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(pair.bus.sessionCount, 0);
  });
});

describe('relay expiry and heartbeat', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair({ proxy: { sessionTtlMs: 400, relay: { pingIntervalMs: 100 } } });
  });
  after(() => pair.close());

  test('sends expired over the WebSocket and GET reports expired when the TTL passes unsettled', async () => {
    const { sessionId } = await pair.startVerification();
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId });
    assert.equal((await client.next()).state, 'pending');
    assert.deepEqual(await client.next(), { type: 'expired', sessionId });
    assert.equal((await client.closed).code, 1000);
    const session = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { state: string };
    assert.equal(session.state, 'expired');

    const late = await postNotification(await pair.notificationUrl(sessionId), successPayload());
    assert.equal(late.status, 200);
    assert.deepEqual(await late.json(), { status: 'ignored' });
    const after = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { state: string; outcome?: unknown };
    assert.equal(after.state, 'expired');
    assert.equal(after.outcome, undefined);
  });

  test('tells a socket subscribing after expiry at once', async () => {
    const { sessionId } = await pair.startVerification();
    for (let i = 0; i < 100; i++) {
      const { state } = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { state: string };
      if (state === 'expired') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId });
    assert.deepEqual(await client.next(), { type: 'subscribed', sessionId, state: 'expired' });
    assert.deepEqual(await client.next(), { type: 'expired', sessionId });
  });

  test('terminates a socket that stops answering pings', async () => {
    const socket = new WebSocket(pair.wsUrl, { origin: pair.origin, autoPong: false });
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    socket.on('error', () => undefined);
    assert.equal(await closed, 1006);
  });

  test('keeps a socket that answers pings', async () => {
    const { sessionId } = await pair.startVerification();
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId });
    await client.next((message) => message.type === 'subscribed');
    // Several heartbeat periods pass before the session's expiry closes it normally.
    assert.equal((await client.closed).code, 1000);
    assert.ok(client.messages.some((message) => message.type === 'expired'));
  });
});

describe('relay race between reading the store and a published outcome', () => {
  /** A store whose held get() reads at once but answers only when `release()` is called. */
  class SlowReadStore extends MemorySessionStore {
    #holding = false;
    #readDone: () => void = () => undefined;
    #release: () => void = () => undefined;
    /** Holds the next get(); resolves once that get has read the (soon stale) record. */
    holdNextGet(): Promise<void> {
      this.#holding = true;
      return new Promise((resolve) => (this.#readDone = resolve));
    }
    release(): void {
      this.#release();
    }
    override async get(sessionId: string): Promise<SessionRecord | undefined> {
      const record = await super.get(sessionId);
      if (!this.#holding) return record;
      this.#holding = false;
      const gate = new Promise<void>((resolve) => (this.#release = resolve));
      this.#readDone();
      await gate;
      return record;
    }
  }

  test('delivers an outcome published while the subscription was reading the store, once', async (t) => {
    const store = new SlowReadStore();
    const bus = new MemoryResultBus();
    const pair = await startProxyPairWithBackend(t, { sessionStore: store, resultBus: bus });
    const { sessionId } = await pair.startVerification();
    const read = store.holdNextGet();
    const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
    client.send({ type: 'subscribe', sessionId });
    await read;
    const { stored } = await store.settle(sessionId, SUCCESS);
    assert.equal(stored, true);
    await bus.publish({ type: 'result', sessionId, outcome: browserOutcome(SUCCESS, undefined) });
    store.release();
    assert.deepEqual(await client.next(), { type: 'subscribed', sessionId, state: 'pending' });
    assert.deepEqual(await client.next(), { type: 'result', sessionId, outcome: browserOutcome(SUCCESS, undefined) });
    await client.closed;
    assert.equal(client.messages.length, 2);
  });
});

describe('relay re-check of a waiting session', () => {
  /** A bus that loses every published message (a subscriber connection that was down at the time). */
  class LosingBus extends MemoryResultBus {
    override async publish(): Promise<void> {}
  }

  test('delivers a stored outcome whose message was lost, once, at the next re-check', async (t) => {
    const store = new MemorySessionStore();
    const pair = await startProxyPairWithBackend(
      t,
      { sessionStore: store, resultBus: new LosingBus() },
      { relay: { recheckIntervalMs: 100 } },
    );
    const { sessionId } = await pair.startVerification();
    const client = await subscribedRelay(pair.wsUrl, pair.origin, sessionId);
    const url = await pair.notificationUrl(sessionId);
    assert.equal((await postNotification(url, successPayload('acct-lost-message'))).status, 200);
    const result = await client.next((message) => message.type === 'result');
    assert.equal((result.outcome as { status: string }).status, 'success');
    assert.equal((await client.closed).code, 1000);
    assert.equal(client.messages.filter((message) => message.type === 'result').length, 1);
  });

  test('rides out a store outage during re-checks quietly and delivers at the first one after it', async (t) => {
    let storeDown = false;
    class OutageStore extends MemorySessionStore {
      override async get(sessionId: string): Promise<SessionRecord | undefined> {
        if (storeDown) throw new SessionBackendUnavailableError('store down for the test');
        return super.get(sessionId);
      }
    }
    const store = new OutageStore();
    const pair = await startProxyPairWithBackend(
      t,
      { sessionStore: store, resultBus: new LosingBus() },
      { relay: { recheckIntervalMs: 50 } },
    );
    const { sessionId } = await pair.startVerification();
    const client = await subscribedRelay(pair.wsUrl, pair.origin, sessionId);
    storeDown = true;
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(pair.logs.find('expiry check failed').length, 0, 'no error line per session and re-check');
    assert.ok(pair.logs.find('session re-check failed').length >= 2);
    await store.settle(sessionId, SUCCESS);
    storeDown = false;
    const result = await client.next((message) => message.type === 'result');
    assert.deepEqual(result.outcome, browserOutcome(SUCCESS, undefined));
    await client.closed;
  });

  test('keeps re-checking a session that is still pending, without sending anything', async (t) => {
    let reads = 0;
    class CountingStore extends MemorySessionStore {
      override async get(sessionId: string): Promise<SessionRecord | undefined> {
        reads++;
        return super.get(sessionId);
      }
    }
    const pair = await startProxyPairWithBackend(
      t,
      { sessionStore: new CountingStore(), resultBus: new MemoryResultBus() },
      { relay: { recheckIntervalMs: 50 } },
    );
    const { sessionId } = await pair.startVerification();
    const client = await subscribedRelay(pair.wsUrl, pair.origin, sessionId);
    const readsAfterSubscribe = reads;
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.ok(reads >= readsAfterSubscribe + 2, `re-read ${reads - readsAfterSubscribe} times`);
    assert.deepEqual(
      client.messages.map((message) => message.type),
      ['subscribed'],
    );
    client.close();
    await client.closed;
  });
});

describe('relay cost per published event', () => {
  /** A bus that counts how many subscriber callbacks each publish runs. */
  class CountingBus extends MemoryResultBus {
    calls = 0;
    override subscribe(sessionId: string, listener: (event: SessionEvent) => void): () => void {
      return super.subscribe(sessionId, (event) => {
        this.calls++;
        listener(event);
      });
    }
  }

  test('runs one subscriber callback per event whether 1 or 40 sessions are open', async (t) => {
    const bus = new CountingBus();
    const pair = await startProxyPairWithBackend(t, { sessionStore: new MemorySessionStore(), resultBus: bus });
    const subscribed = (sessionId: string) => subscribedRelay(pair.wsUrl, pair.origin, sessionId);
    const callsForOneEvent = async (sessionId: string) => {
      const before = bus.calls;
      await bus.publish({ type: 'state', sessionId, state: 'returned' });
      return bus.calls - before;
    };

    const first = await pair.startVerification();
    const firstClient = await subscribed(first.sessionId);
    assert.equal(await callsForOneEvent(first.sessionId), 1);

    const others = [];
    for (let i = 0; i < 39; i++) others.push(await subscribed((await pair.startVerification()).sessionId));
    assert.equal(bus.sessionCount, 40);
    assert.equal(await callsForOneEvent(first.sessionId), 1, 'the other 39 sessions cost nothing');
    await firstClient.next((message) => message.type === 'state');
    for (const other of others) assert.equal(other.messages.filter((message) => message.type === 'state').length, 0);
    for (const client of [firstClient, ...others]) client.close();
    await Promise.all([firstClient, ...others].map((client) => client.closed));
  });
});

describe('relay expiry while the store is briefly unreachable', () => {
  /** A store whose get() fails `failures` times once armed (as an unreachable Redis would). */
  class BlinkingStore extends MemorySessionStore {
    failures = 0;
    override async get(sessionId: string): Promise<SessionRecord | undefined> {
      if (this.failures > 0) {
        this.failures--;
        throw new SessionBackendUnavailableError('store down for the test');
      }
      return super.get(sessionId);
    }
  }

  test('checks the expiry again and still sends expired', async (t) => {
    const store = new BlinkingStore();
    const pair = await startProxyPairWithBackend(
      t,
      { sessionStore: store, resultBus: new MemoryResultBus() },
      {
        sessionTtlMs: 300,
        relay: { expiryRetryMs: 50 },
      },
    );
    const { sessionId } = await pair.startVerification();
    const client = await subscribedRelay(pair.wsUrl, pair.origin, sessionId);
    store.failures = 2; // the expiry check at the TTL and its first retry
    assert.deepEqual(await client.next(), { type: 'expired', sessionId });
    assert.equal((await client.closed).code, 1000);
    assert.equal(store.failures, 0);
    // An outage the proxy expects: one line for it, none per failed check (the outage log counts them).
    assert.equal(pair.logs.find('session store is unavailable').length, 1);
    assert.equal(pair.logs.find('expiry check failed').length, 0);
  });
});
