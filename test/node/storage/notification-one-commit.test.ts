// A notification is one transaction (issue 40, storage/outcome-write.ts): its markers, the settle and the
// merchant's event with its job are committed together, on SQLite and on PostgreSQL, so a failure between
// them leaves none of them (the provider's retry starts afresh); on SQLite the 2xx waits for one fsync,
// not one for the outcome and another for the event. PostgreSQL runs where it is installed
// (postgres-server.ts: skipped loudly, required with CI=true).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { createStorage } from '../../../proxy/index.ts';
import { DATABASE_FILE } from '../../../proxy/storage/sqlite/database.ts';
import { openPostgresStorage } from '../../../proxy/storage/postgres/storage.ts';
import type { Storage } from '../../../proxy/storage/storage.ts';
import { eventIdFor } from '../../../proxy/events/ids.ts';
import { startProxyPair, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { EVENTS_SECRET, startMerchantEndpoint, type MerchantEndpoint } from '../../helpers/merchant-endpoint.ts';
import { postNotification, successPayload } from '../../helpers/webhooks.ts';
import { postgresSkipReason, startPostgresServer, type PostgresServer } from '../../helpers/postgres-server.ts';

/** A backend, and a way around the proxy to its tables: to make the event's insert fail, and to count rows. */
interface Backend {
  storage: Storage;
  /** From now on every insert of an event (or of the one with id `only`) fails, as a full disk or a constraint would; `heal` ends it. */
  breakEvents(only?: string): Promise<void>;
  healEvents(): Promise<void>;
  /** How many link-reference markers name `sessionId`. */
  linkMarkers(sessionId: string): Promise<number>;
  close(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), 'obv-one-commit-'));
  const storage = createStorage({ kind: 'sqlite', dataDir: dir });
  // A second connection to the file (the proxy's own handle is not exposed).
  const side = new DatabaseSync(join(dir, DATABASE_FILE));
  return {
    storage,
    breakEvents: async (only) =>
      side.exec(
        `CREATE TRIGGER fail_event BEFORE INSERT ON events ${only ? `WHEN NEW.id = '${only}'` : ''} BEGIN SELECT RAISE(ABORT, 'injected'); END`,
      ),
    healEvents: async () => side.exec('DROP TRIGGER fail_event'),
    linkMarkers: async (sessionId) =>
      Number(side.prepare("SELECT count(*) AS n FROM markers WHERE value = ? AND key LIKE 'link:%'").get(sessionId)?.n),
    async close() {
      side.close();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let postgres: Promise<PostgresServer> | undefined;
async function postgresBackend(): Promise<Backend> {
  const server = await (postgres ??= startPostgresServer());
  const schema = 'one_commit';
  const storage = await openPostgresStorage({ url: server.url, schema });
  return {
    storage,
    breakEvents: async (only) => {
      const when = only
        ? `IF NEW.id = '${only}' THEN RAISE EXCEPTION 'injected'; END IF; RETURN NEW;`
        : "RAISE EXCEPTION 'injected';";
      await server.sql(
        `CREATE FUNCTION ${schema}.fail_event() RETURNS trigger AS $$ BEGIN ${when} END $$ LANGUAGE plpgsql;
        CREATE TRIGGER fail_event BEFORE INSERT ON ${schema}.events FOR EACH ROW EXECUTE FUNCTION ${schema}.fail_event();`,
      );
    },
    healEvents: async () => {
      await server.sql(`DROP FUNCTION ${schema}.fail_event() CASCADE`);
    },
    linkMarkers: async (sessionId) =>
      Number(
        await server.sql(`SELECT count(*) FROM ${schema}.markers WHERE value = '${sessionId}' AND key LIKE 'link:%'`),
      ),
    async close() {
      await storage.close();
    },
  };
}

const backends: [string, () => Promise<Backend>, string | false][] = [
  ['SQLite', sqliteBackend, false],
  ['PostgreSQL', postgresBackend, postgresSkipReason()],
];

after(async () => {
  await (await postgres?.catch(() => undefined))?.close();
});

for (const [name, open, skip] of backends) {
  describe(`a notification on ${name}: one transaction`, { skip }, () => {
    let backend: Backend;
    let endpoint: MerchantEndpoint;
    let pair: ProxyPair;

    before(async () => {
      backend = await open();
      endpoint = await startMerchantEndpoint();
      pair = await startProxyPair({
        proxy: {
          backend: backend.storage,
          eventsUrl: endpoint.url,
          eventsSecrets: [EVENTS_SECRET],
          eventTimings: { retryDelaysMs: [50, 100], attemptTimeoutMs: 500, pollIntervalMs: 25, leaseMs: 2_000 },
        },
      });
    });
    after(async () => {
      await pair?.close();
      await backend?.close();
      await endpoint?.close();
    });

    const endEventOf = (sessionId: string) => eventIdFor(`session-end:${sessionId}`);

    if (name === 'SQLite')
      test('the outcome and its event wait for one fsync together', async () => {
        const { storage } = backend;
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
      const { storage } = backend;
      const { sessionId } = await pair.startVerification();
      const url = await pair.notificationUrl(sessionId);
      // The last write of the notification (the event) fails.
      await backend.breakEvents();
      const webhookId = `msg_one_commit_${Date.now()}`;
      try {
        const refused = await postNotification(url, successPayload('acct-rolled-back'), { id: webhookId });
        await refused.body?.cancel();
        assert.ok(refused.status >= 500, `not acknowledged (answered ${refused.status})`);
      } finally {
        await backend.healEvents();
      }
      const record = await pair.store.get(sessionId);
      assert.equal(record?.state, 'pending', 'the outcome was rolled back with the event');
      assert.equal(record?.outcome, undefined);
      assert.equal(await storage.eventOutbox.get(endEventOf(sessionId)), undefined);
      assert.equal(await pair.store.readMark(`webhook:${webhookId}`), undefined, "the webhook-id's marker too");
      assert.equal(await backend.linkMarkers(sessionId), 0, "the link reference's marker too");

      const retried = await postNotification(url, successPayload('acct-rolled-back'), { id: webhookId });
      assert.equal(retried.status, 200);
      const stored = await pair.store.get(sessionId);
      assert.equal(stored?.state, 'succeeded');
      assert.ok(await storage.eventOutbox.get(endEventOf(sessionId)));
      const linkRef = (stored?.outcome as { linkRef: string }).linkRef;
      assert.equal(await pair.store.readMark(`link:${linkRef}`), sessionId);
    });

    // On SQLite they commit in one transaction (storage/sqlite/write-batch.ts): the failing one must take
    // none of the others with it.
    test('among notifications arriving together, one whose writes fail is refused alone; the others are stored', async () => {
      const { storage } = backend;
      const sessions = await Promise.all(Array.from({ length: 8 }, () => pair.startVerification()));
      const urls = await Promise.all(sessions.map(({ sessionId }) => pair.notificationUrl(sessionId)));
      const failing = sessions[3]!.sessionId;
      await backend.breakEvents(endEventOf(failing));
      let answers: number[];
      try {
        answers = await Promise.all(
          urls.map(async (url, index) => {
            const response = await postNotification(url, successPayload(`acct-together-${index}`));
            await response.body?.cancel();
            return response.status;
          }),
        );
      } finally {
        await backend.healEvents();
      }
      sessions.forEach(({ sessionId }, index) => {
        if (sessionId === failing) assert.ok(answers[index]! >= 500, `the failing one: ${answers[index]}`);
        else assert.equal(answers[index], 200, `notification ${index}`);
      });
      for (const { sessionId } of sessions) {
        const record = await pair.store.get(sessionId);
        const event = await storage.eventOutbox.get(endEventOf(sessionId));
        if (sessionId === failing) {
          assert.equal(record?.state, 'pending');
          assert.equal(event, undefined);
          assert.equal(await backend.linkMarkers(sessionId), 0);
        } else {
          assert.equal(record?.state, 'succeeded');
          assert.ok(event, 'its event recorded');
          assert.equal(await backend.linkMarkers(sessionId), 1);
        }
      }
    });
  });
}
