// A PostgreSQL server that dies while one of the pool's connections is lent out (in a transaction, or
// migrating) must fail that work, not the process: the pool stops listening for a lent connection's
// 'error', and an unheard 'error' event ends Node. Three instances crashed this way in the failover
// rehearsal, their transactions waiting on a synchronous standby when the primary was killed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Database } from '../../../proxy/storage/postgres/database.ts';
import { postgresSkipReason, startPostgresServer, type PostgresServer } from '../../helpers/postgres-server.ts';

describe('a PostgreSQL connection lost mid-transaction', { skip: postgresSkipReason() }, () => {
  let server: PostgresServer;
  let db: Database;
  before(async () => {
    server = await startPostgresServer();
    db = new Database({ url: server.url, connectTimeoutMs: 1_000 });
    await db.ready();
  });
  after(async () => {
    await db?.close().catch(() => undefined);
    await server?.close();
  });

  it('rejects the transaction and leaves the process running when the server is killed between its statements', async () => {
    let reached!: () => void;
    const inside = new Promise<void>((resolve) => (reached = resolve));
    const transaction = db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      reached();
      // The server dies here, while this transaction holds its connection between two statements.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await tx.query('SELECT 1');
    });
    await inside;
    await server.stop('SIGKILL');
    await assert.rejects(transaction);
    // Once the server is back, the pool serves again with new connections.
    await server.start();
    assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
  });
});
