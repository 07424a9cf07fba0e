// A session store that cannot be reached (SessionBackendUnavailableError, as the Redis backend throws
// it, or a merchant's own store) → 503 + Retry-After on every route, so the provider retries its
// notification; any other store failure stays a plain 500. Runs without Redis.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  MemoryResultBus,
  SessionBackendUnavailableError,
  type SessionEvent,
  type SessionStore,
} from '../../../proxy/index.ts';
import { MemorySessionStore } from '../../../proxy/storage/memory/session-store.ts';
import { startProxyPair, startProxyPairWithBackend, storageWith, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { subscribedRelay } from '../../helpers/relay-client.ts';
import { signNotification, successPayload } from '../../helpers/webhooks.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

/** `store` whose every call (but close) rejects with `failure()` while that returns an error. */
function failingWhile(store: SessionStore, failure: () => Error | undefined): SessionStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || property === 'close') return value;
      return (...args: unknown[]) => {
        const error = failure();
        return error ? Promise.reject(error) : (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

describe('session store unavailable', () => {
  let pair: ProxyPair;
  let failure: Error | undefined;
  const memory = new MemorySessionStore();

  before(async () => {
    pair = await startProxyPair({
      proxy: { backend: storageWith({ sessionStore: failingWhile(memory, () => failure) }) },
    });
  });
  after(async () => {
    await pair.close();
    await memory.close();
  });

  async function expect503(response: Response, what: string): Promise<void> {
    assert.equal(response.status, 503, what);
    assert.equal(response.headers.get('retry-after'), '5', what);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8', what);
    const body = (await response.json()) as { type: string; status: number; detail: string };
    assert.equal(body.type, 'urn:obv-link:problem:session-store-unavailable', what);
    assert.equal(body.status, 503);
    assert.doesNotMatch(body.detail, /redis/i, 'the client is not told about the backend');
  }

  test('answers a notification 503 with Retry-After and stores it when the provider retries', async () => {
    const { sessionId } = await pair.startVerification();
    const notification = signNotification(successPayload('acct-after-outage'));
    const url = await pair.notificationUrl(sessionId);
    failure = new SessionBackendUnavailableError('store down for the test');
    try {
      await expect503(
        await fetch(url, { method: 'POST', headers: notification.headers, body: notification.body }),
        'notification',
      );
    } finally {
      failure = undefined;
    }
    // The provider's retry (same webhook-id, same body) is taken once the store is back.
    const retry = await fetch(url, { method: 'POST', headers: notification.headers, body: notification.body });
    assert.equal(retry.status, 200);
    assert.deepEqual(await retry.json(), { status: 'stored' });
    assert.equal((await memory.get(sessionId))?.outcome?.status, 'success');
  });

  test('answers starts, session reads and the return page 503 with Retry-After', async () => {
    const { sessionId } = await pair.startVerification();
    const returnUrl = await pair.returnUrl(sessionId);
    const errorLines = () => pair.logs.records().filter((record) => record.level === 50 && record.status === 503);
    const errorsBefore = errorLines().length;
    failure = new SessionBackendUnavailableError('store down for the test');
    try {
      const start = await fetch(`${pair.baseUrl}/verifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'outage-start' },
        body: JSON.stringify({}),
      });
      await expect503(start, 'POST /verifications');
      await expect503(await lookupSession(pair.baseUrl, sessionId), 'POST /sessions/lookup');
      await expect503(await fetch(returnUrl), 'GET /return');
    } finally {
      failure = undefined;
    }
    // An outage the proxy expects: no error line per refused request, one warning for the outage.
    assert.equal(errorLines().length - errorsBefore, 0);
    assert.equal(pair.logs.find('session store is unavailable').length, 1);
  });

  test('keeps any other store failure a 500 without Retry-After', async () => {
    const { sessionId } = await pair.startVerification();
    failure = new Error('a bug in the store');
    try {
      const response = await lookupSession(pair.baseUrl, sessionId);
      assert.equal(response.status, 500);
      assert.equal(response.headers.get('retry-after'), null);
      assert.equal(((await response.json()) as { type: string }).type, 'urn:obv-link:problem:internal');
    } finally {
      failure = undefined;
    }
  });
});

describe('result bus unavailable after the outcome was stored', () => {
  /** A bus whose next publish fails as an unreachable Redis would. */
  class FlakyBus extends MemoryResultBus {
    failNext = false;
    override async publish(event: SessionEvent): Promise<void> {
      if (this.failNext) {
        this.failNext = false;
        throw new SessionBackendUnavailableError('bus down for the test');
      }
      return super.publish(event);
    }
  }

  test("does not acknowledge the notification, and the provider's retry delivers the stored outcome once", async (t) => {
    const store = new MemorySessionStore();
    const bus = new FlakyBus();
    const pair = await startProxyPairWithBackend(t, { sessionStore: store, resultBus: bus });
    const { sessionId } = await pair.startVerification();
    const client = await subscribedRelay(pair.wsUrl, pair.origin, sessionId);

    const notification = signNotification(successPayload('acct-bus-outage'));
    const url = await pair.notificationUrl(sessionId);
    bus.failNext = true;
    const first = await fetch(url, { method: 'POST', headers: notification.headers, body: notification.body });
    assert.equal(first.status, 503, 'no 2xx: the provider must retry');
    assert.equal((await store.get(sessionId))?.outcome?.status, 'success', 'stored before anything was acknowledged');

    const retry = await fetch(url, { method: 'POST', headers: notification.headers, body: notification.body });
    assert.equal(retry.status, 200);
    const result = await client.next((message) => message.type === 'result');
    assert.equal((result.outcome as { status: string }).status, 'success');
    assert.equal(
      JSON.stringify(result).includes('acct-bus-outage'),
      false,
      'the relayed result carries no accountToken',
    );
    await client.closed;
    assert.equal(client.messages.filter((message) => message.type === 'result').length, 1);
  });
});
