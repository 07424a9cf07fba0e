// A notification on SQLite is one transaction and one durable wait (issue 40, storage/outcome-write.ts):
// its markers, the settle and the merchant's event with its job are committed together, so a failure
// between them leaves none of them (the provider's retry starts afresh), and the 2xx waits for one fsync,
// not one for the outcome and another for the event.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { createStorage } from '../../../proxy/index.ts';
import { DATABASE_FILE } from '../../../proxy/storage/sqlite/database.ts';
import type { Storage } from '../../../proxy/storage/storage.ts';
import { eventIdFor } from '../../../proxy/events/ids.ts';
import { startProxyPair, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { EVENTS_SECRET, startMerchantEndpoint, type MerchantEndpoint } from '../../helpers/merchant-endpoint.ts';
import { postNotification, successPayload } from '../../helpers/webhooks.ts';

describe('a notification on SQLite: one commit, one fsync wait', () => {
  let dir: string;
  let storage: Storage;
  let endpoint: MerchantEndpoint;
  let pair: ProxyPair;
  /** A second connection to the file, for the test's trigger (the proxy's own handle is not exposed). */
  let side: DatabaseSync;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'obv-one-commit-'));
    storage = createStorage({ kind: 'sqlite', dataDir: dir });
    side = new DatabaseSync(join(dir, DATABASE_FILE));
    endpoint = await startMerchantEndpoint();
    pair = await startProxyPair({
      proxy: {
        backend: storage,
        eventsUrl: endpoint.url,
        eventsSecrets: [EVENTS_SECRET],
        eventTimings: { retryDelaysMs: [50, 100], attemptTimeoutMs: 500, pollIntervalMs: 25, leaseMs: 2_000 },
      },
    });
  });
  after(async () => {
    await pair?.close();
    side?.close();
    await storage?.close();
    await endpoint?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const endEventOf = (sessionId: string) => eventIdFor(`session-end:${sessionId}`);

  test('the outcome and its event wait for one fsync together', async () => {
    const { sessionId } = await pair.startVerification();
    const url = await pair.notificationUrl(sessionId);
    const before = storage.syncStats!();
    const response = await postNotification(url, successPayload('acct-one-commit'));
    assert.equal(response.status, 200);
    const after = storage.syncStats!();
    assert.equal(after.acknowledgements - before.acknowledgements, 1, 'one durable wait before the 2xx');
    assert.equal((await pair.store.get(sessionId))?.state, 'succeeded');
    assert.ok(await storage.eventOutbox.get(endEventOf(sessionId)), 'link.succeeded recorded with the outcome');
  });

  test('a failure between the writes leaves none of them, and the retry stores all of them', async () => {
    const { sessionId } = await pair.startVerification();
    const url = await pair.notificationUrl(sessionId);
    // The last write of the notification (the event) fails, as a full disk or a constraint would.
    side.exec("CREATE TRIGGER fail_event BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'injected'); END");
    const webhookId = `msg_one_commit_${Date.now()}`;
    try {
      const refused = await postNotification(url, successPayload('acct-rolled-back'), { id: webhookId });
      await refused.body?.cancel();
      assert.ok(refused.status >= 500, `not acknowledged (answered ${refused.status})`);
    } finally {
      side.exec('DROP TRIGGER fail_event');
    }
    const record = await pair.store.get(sessionId);
    assert.equal(record?.state, 'pending', 'the outcome was rolled back with the event');
    assert.equal(record?.outcome, undefined);
    assert.equal(await storage.eventOutbox.get(endEventOf(sessionId)), undefined);
    assert.equal(await pair.store.readMark(`webhook:${webhookId}`), undefined, "the webhook-id's marker too");
    const links = side
      .prepare("SELECT count(*) AS n FROM markers WHERE value = ? AND key LIKE 'link:%'")
      .get(sessionId);
    assert.equal(links?.n, 0, "the link reference's marker too");

    const retried = await postNotification(url, successPayload('acct-rolled-back'), { id: webhookId });
    assert.equal(retried.status, 200);
    const stored = await pair.store.get(sessionId);
    assert.equal(stored?.state, 'succeeded');
    assert.ok(await storage.eventOutbox.get(endEventOf(sessionId)));
    const linkRef = (stored?.outcome as { linkRef: string }).linkRef;
    assert.equal(await pair.store.readMark(`link:${linkRef}`), sessionId);
  });
});
