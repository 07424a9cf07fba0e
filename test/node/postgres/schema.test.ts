// The PostgreSQL schema (proxy/storage/postgres/schema.ts): created from an empty database, migrated from
// the previous version with its rows kept, migrated once when several instances start at the same moment
// (the advisory lock), and refused when a newer release migrated it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadPg } from '../../../proxy/storage/postgres/packages.ts';
import { Database } from '../../../proxy/storage/postgres/database.ts';
import { DatabaseSchemaError, migrate, SCHEMA_VERSION } from '../../../proxy/storage/postgres/schema.ts';
import { openPostgresStorage } from '../../../proxy/storage/postgres/storage.ts';
import { randomBytes } from 'node:crypto';
import { randomEventId } from '../../../proxy/events/ids.ts';
import { createOutboxCodec } from '../../../proxy/sealing/outbox-codec.ts';
import { buildEvent } from '../../../proxy/storage/events.ts';
import { postgresSkipReason, startPostgresServer, type PostgresServer } from '../../helpers/postgres-server.ts';

const skip = postgresSkipReason();

describe('PostgreSQL schema migrations', { skip }, () => {
  let server: PostgresServer;

  before(async () => {
    server = await startPostgresServer();
  });

  after(async () => {
    await server?.close();
  });

  async function versions(schema: string): Promise<string> {
    return server.sql(`SELECT string_agg(version::text, ',' ORDER BY version) FROM ${schema}.schema_migrations`);
  }

  test('creates every table of this release in an empty database, recording each version', async () => {
    const db = new Database({ url: server.url, schema: 'fresh' });
    try {
      assert.deepEqual(await db.ready(), { from: 0, to: SCHEMA_VERSION });
      assert.equal(await versions('fresh'), Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1).join(','));
      const tables = await server.sql(
        "SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'fresh'",
      );
      assert.equal(
        tables,
        'bus_events,earlier_payments,event_jobs,events,idempotency_claims,link_sessions,markers,payment_keys,payments,rate_limits,saved_account_removals,schema_migrations,sessions',
      );
    } finally {
      await db.close();
    }
  });

  test('migrates a database of the previous version, keeping what it holds', async () => {
    // Version 1, as the previous release left it, with a removal recorded.
    const client = new (loadPg().Client)({ connectionString: server.url });
    await client.connect();
    try {
      assert.deepEqual(await migrate(client as never, 'previous', 1), { from: 0, to: 1 });
    } finally {
      await client.end();
    }
    await server.sql(
      'INSERT INTO previous.saved_account_removals VALUES (\'u-1\', \'a-1\', \'{"merchantUserId":"u-1","accountId":"a-1","removedAt":1}\')',
    );
    assert.equal(await versions('previous'), '1');

    const storage = await openPostgresStorage({ url: server.url, schema: 'previous' });
    try {
      assert.equal(await versions('previous'), Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1).join(','));
      assert.equal(await storage.removals.isRemoved('u-1', 'a-1'), true);
      // Version 2's tables are in use: the relay's session events.
      await storage.resultBus.publish({ type: 'state', sessionId: 's-1', state: 'returned' });
      assert.equal(await server.sql('SELECT count(*) FROM previous.bus_events'), '1');
    } finally {
      await storage.close();
    }
  });

  test('migrates a database of version 3: its events, stored in the clear, are sealed and tagged, listed as they were, and found by forgetUser', async () => {
    const client = new (loadPg().Client)({ connectionString: server.url });
    await client.connect();
    try {
      assert.deepEqual(await migrate(client as never, 'clearevents', 3), { from: 0, to: 3 });
    } finally {
      await client.end();
    }
    const event = buildEvent(
      randomEventId(),
      'link.succeeded',
      {
        merchantUserId: 'user-clear-7',
        linkRef: 'ref-1',
        accountLabel: 'Checking ••••9753',
        fiName: 'Bank',
        fiAccountType: 'CHECKING',
        savedAccount: {
          sealed: 'obv1.sealed-for-the-user',
          accountId: 'sa_1',
          accountLabel: 'Checking ••••9753',
          fiName: 'Bank',
          fiAccountType: 'CHECKING',
          linkedAt: new Date(1_000).toISOString(),
        },
      },
      1_000,
    );
    const body = JSON.stringify(event);
    await server.sql(
      `INSERT INTO clearevents.events (id, body, status, created_at, pending_since) VALUES ('${event.id}', '${body}', 'delivered', 1000, 1000)`,
    );
    const codec = createOutboxCodec([{ id: 'k1', key: randomBytes(32) }]);
    const storage = await openPostgresStorage({ url: server.url, schema: 'clearevents', outboxCodec: codec });
    try {
      assert.equal((await storage.eventOutbox.list({ limit: 10 }, 2_000))?.events[0]?.body, body);
      // forgetUser waits for the start's sealing pass, then finds the event by its tag.
      assert.equal(await storage.eventOutbox.forgetUser('user-clear-7'), 1);
      const rows = await server.sql(
        "SELECT string_agg(body || ' ' || coalesce(user_tag, 'NULL'), ',') FROM clearevents.events",
      );
      assert.match(rows, /^obv1\./, 'sealed');
      assert.ok(!rows.includes('user-clear-7') && !rows.includes('9753') && !rows.includes('NULL'), rows);
      assert.equal((await storage.eventOutbox.get(event.id))?.event.data.merchantUserId, 'user-clear-7');
    } finally {
      await storage.close();
    }
  });

  test('several instances starting at once migrate once: the others wait for the lock and find nothing to do', async () => {
    const dbs = Array.from({ length: 4 }, () => new Database({ url: server.url, schema: 'together' }));
    try {
      const reports = await Promise.all(dbs.map((db) => db.ready()));
      assert.equal(reports.filter((report) => report.from === 0).length, 1, JSON.stringify(reports));
      assert.ok(reports.every((report) => report.to === SCHEMA_VERSION));
      assert.equal(await versions('together'), Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1).join(','));
    } finally {
      await Promise.all(dbs.map((db) => db.close()));
    }
  });

  test('refuses a schema a newer release migrated, naming it, and writes nothing', async () => {
    const first = new Database({ url: server.url, schema: 'newer' });
    await first.ready();
    await first.close();
    await server.sql(
      `INSERT INTO newer.schema_migrations (version, description) VALUES (${SCHEMA_VERSION + 1}, 'from the future')`,
    );
    const db = new Database({ url: server.url, schema: 'newer' });
    try {
      await assert.rejects(
        db.ready(),
        (error: Error) => error instanceof DatabaseSchemaError && /migrated by a newer obv-link/.test(error.message),
      );
      await assert.rejects(db.query('SELECT 1'), DatabaseSchemaError);
    } finally {
      await db.close();
    }
  });
});
