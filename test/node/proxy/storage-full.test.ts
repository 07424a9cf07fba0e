// A full disk under the storage (StorageFullError, as the SQLite storage throws it: storage/sqlite/
// disk-full.ts) is an outage the proxy expects: writes answer 503 storage-full with Retry-After, in the
// proxy's words (not the directory's), nothing of the refused request is acknowledged, /readyz is 503,
// and the log has one line when it starts and one when writes are taken again, never a line per request.
// Runs without a real small disk: test/node/storage/disk-full.test.ts and test/e2e/disk-full.test.ts do that.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { StorageFullError, type SessionStore } from '../../../proxy/index.ts';
import { MemorySessionStore } from '../../../proxy/storage/memory/session-store.ts';
import { startProxyPair, storageWith, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { signNotification, successPayload } from '../../helpers/webhooks.ts';
import { eventually } from '../redis/support.ts';

/** `store` whose writes (reads go on working, as on a full disk) reject while `full()` says so. */
function fullWhile(store: SessionStore, full: () => boolean): SessionStore {
  const writes = new Set([
    'create',
    'settle',
    'markReturned',
    'claimIdempotencyKey',
    'completeIdempotencyKey',
    'releaseIdempotencyKey',
    'mark',
    'unmark',
  ]);
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (!writes.has(String(property))) return (value as (...a: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) =>
        full()
          ? Promise.reject(new StorageFullError('/srv/obv-link-data', 4_096))
          : (value as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
}

describe('storage full', () => {
  let pair: ProxyPair;
  let full = false;
  const memory = new MemorySessionStore();

  before(async () => {
    pair = await startProxyPair({ proxy: { backend: storageWith({ sessionStore: fullWhile(memory, () => full) }) } });
  });
  after(async () => {
    await pair.close();
    await memory.close();
  });

  test('answers writes 503 storage-full with Retry-After and /readyz 503; one line each way, none per request; the retry is stored', async () => {
    const { sessionId } = await pair.startVerification();
    const notification = signNotification(successPayload('acct-after-full'));
    const url = await pair.notificationUrl(sessionId);
    const linesBefore = pair.logs.lines.length;
    full = true;
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const refused = await fetch(url, { method: 'POST', headers: notification.headers, body: notification.body });
        assert.equal(refused.status, 503, 'no 2xx: the provider must retry');
        assert.equal(refused.headers.get('retry-after'), '30');
        assert.equal(refused.headers.get('content-type'), 'application/problem+json; charset=utf-8');
        const body = (await refused.json()) as { type: string; title: string; detail: string };
        assert.equal(body.type, 'urn:obv-link:problem:storage-full');
        assert.equal(body.title, 'Storage full');
        assert.doesNotMatch(body.detail, /srv|obv-link-data/, 'the directory stays in the log');
      }
      assert.equal((await memory.get(sessionId))?.outcome, undefined, 'nothing refused was stored');
      const ready = await fetch(`${pair.baseUrl}/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual(await ready.json(), { status: 'unavailable', sessionStore: 'full', credentials: 'accepted' });
    } finally {
      full = false;
    }
    const [started, ...again] = pair.logs.find('storage is full');
    assert.equal(again.length, 0, 'one line for the episode');
    assert.equal(started!.level, 50);
    assert.equal(started!.location, '/srv/obv-link-data');
    assert.equal(started!.freeBytes, 4_096);
    // Within the probe's second, the end of the episode, with what was refused meanwhile.
    const back = await eventually(() => pair.logs.find('storage takes writes again')[0], 5_000);
    assert.deepEqual(back.refused, { requests: 3, readinessProbes: 1 });
    const during = pair.logs.records().slice(linesBefore);
    assert.deepEqual(
      during.filter((record) => Number(record.level) >= 40).map((record) => record.msg),
      [started!.msg],
      'no line per request, no stack',
    );

    const retry = await fetch(url, { method: 'POST', headers: notification.headers, body: notification.body });
    assert.equal(retry.status, 200);
    assert.equal((await memory.get(sessionId))?.outcome?.status, 'success');
    assert.equal((await fetch(`${pair.baseUrl}/readyz`)).status, 200);
  });
});
