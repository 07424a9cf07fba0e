// Proxy instances (createObvProxy with OBV_DATABASE_URL) sharing one PostgreSQL and one sandbox provider,
// without Redis: a result taken by one instance reaches the browser whose socket another holds (NOTIFY),
// and still does when that instance's NOTIFY listener was cut (the bus reads its table); a database
// restart answers 503 meanwhile, readiness included, and everything comes back by itself. The outbox's
// jobs are leased across instances: a claim of an instance that died is taken over once its lease ends.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startProvider, type RunningProvider } from '../../../sandbox/index.ts';
import { randomEventId } from '../../../proxy/events/ids.ts';
import type { SessionEvent } from '../../../proxy/storage/result-bus.ts';
import { openPostgresStorage } from '../../../proxy/storage/postgres/storage.ts';
import { postgresSkipReason, startPostgresServer, type PostgresServer } from '../../helpers/postgres-server.ts';
import { lookupSession } from '../../helpers/session-requests.ts';
import {
  readSession,
  signInAtBank,
  startInstance,
  startVerification,
  subscribe,
  type ProxyInstance,
} from '../redis/cluster.ts';
import { eventually } from '../redis/support.ts';

const skip = postgresSkipReason();

describe('two proxy instances sharing PostgreSQL', { skip }, () => {
  let postgres: PostgresServer;
  let provider: RunningProvider;
  let a: ProxyInstance;
  let b: ProxyInstance;

  before(async () => {
    postgres = await startPostgresServer();
    // Short retries: a notification refused during an outage comes back within a second or two.
    provider = await startProvider({
      notificationRetryDelaysMs: [100, 200, 300, 500, 500, 1_000, 1_000, 2_000, 2_000, 2_000],
      notificationTimeoutMs: 2_000,
    });
    const extra = { databaseUrl: postgres.url, databaseStatementTimeoutMs: 2_000 };
    a = await startInstance({ provider, extra });
    b = await startInstance({ provider, extra });
  });

  after(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    await provider?.close();
    await postgres?.close();
  });

  it('relays an outcome taken by one instance to the browser connected to the other, once', async () => {
    const { sessionId, consumerUrl } = await startVerification(a);
    const browser = await subscribe(b, sessionId);
    await signInAtBank(consumerUrl);
    const result = await browser.next('result');
    assert.equal((result.outcome as { status: string }).status, 'success');
    await browser.closed;
    assert.equal(browser.messages.filter((m) => m.type === 'result').length, 1);
    assert.equal((await readSession(a, sessionId)).body.state, 'succeeded');
  });

  it('relays the other way too, and still when the listening connection was cut (the bus reads its table)', async () => {
    const { sessionId, consumerUrl } = await startVerification(b);
    const browser = await subscribe(a, sessionId);
    // Every instance's LISTEN connection ends: a NOTIFY sent now reaches nobody.
    const cut = await postgres.sql(
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'obv-link:listener'",
    );
    assert.equal(cut, '2');
    await signInAtBank(consumerUrl, 'user_locked', 'x');
    const result = await browser.next('result');
    assert.equal((result.outcome as { code: string }).code, 'ACCOUNT_LOCKED');
  });

  it('answers 503 while the database is down, readiness included, and comes back by itself', async () => {
    const { sessionId, consumerUrl } = await startVerification(a);
    const browser = await subscribe(b, sessionId);
    const attemptsBefore = provider.stats.notificationAttempts;
    const deliveredBefore = provider.stats.notificationsDelivered;
    await postgres.stop('SIGKILL');
    try {
      const ready = await fetch(`${a.url}/obv/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual(
        { ...((await ready.json()) as object), credentials: undefined },
        { status: 'unavailable', sessionStore: 'unreachable', credentials: undefined },
      );
      const during = await lookupSession(`${a.url}/obv`, sessionId);
      assert.equal(during.status, 503);
      assert.equal(((await during.json()) as { type: string }).type, 'urn:obv-link:problem:session-store-unavailable');
      // The notification is refused, not acknowledged: the provider retries.
      await signInAtBank(consumerUrl);
      await eventually(() => (provider.stats.notificationAttempts >= attemptsBefore + 2 ? true : undefined));
      assert.equal(provider.stats.notificationsDelivered, deliveredBefore);
    } finally {
      await postgres.start();
    }
    await eventually(async () => ((await fetch(`${a.url}/obv/readyz`)).status === 200 ? true : undefined), 20_000);
    const result = await browser.next('result');
    assert.equal((result.outcome as { status: string }).status, 'success');
    await provider.notificationsSettled();
    assert.equal(provider.stats.notificationsDelivered, deliveredBefore + 1);
  });

  it("gives each due job to one instance; a dead instance's job goes to another when its lease ends", async () => {
    const one = await openPostgresStorage({ url: postgres.url, schema: 'leases' });
    const two = await openPostgresStorage({ url: postgres.url, schema: 'leases' });
    try {
      const now = Date.now();
      for (let i = 0; i < 20; i++) {
        await one.eventOutbox.append(
          {
            id: randomEventId(),
            type: 'link.cancelled',
            createdAt: new Date(now).toISOString(),
            data: { merchantTransactionId: `order-${i}` },
          },
          now,
        );
      }
      // Both claim at once: SKIP LOCKED splits the jobs, nobody waits, nobody gets one twice.
      const [first, second] = await Promise.all([
        one.eventOutbox.claimDue(now, 60_000, 15),
        two.eventOutbox.claimDue(now, 120_000, 15),
      ]);
      const ids = [...first!, ...second!].map((job) => (job.kind === 'deliver' ? job.eventId : job.sessionId));
      assert.equal(ids.length, 20);
      assert.equal(new Set(ids).size, 20);
      const holders = await postgres.sql('SELECT count(DISTINCT leased_by) FROM leases.event_jobs');
      assert.equal(holders, '2');
      // `one` dies holding its jobs: nobody may take them before the lease ends, `two` may after.
      await one.close();
      assert.deepEqual(await two.eventOutbox.claimDue(now + 59_000, 60_000, 50), []);
      const taken = await two.eventOutbox.claimDue(now + 60_000, 60_000, 50);
      assert.equal(taken.length, first!.length);
    } finally {
      await one.close();
      await two.close();
    }
  });
  it('delivers a session event whose NOTIFY never came: the bus reads its table while sockets wait', async () => {
    const storage = await openPostgresStorage({ url: postgres.url, schema: 'floor', busPollIntervalMs: 200 });
    try {
      const events: SessionEvent[] = [];
      storage.resultBus.subscribe('session-floor', (event) => events.push(event));
      // Recorded as publish() records it, but no NOTIFY is sent: only a read can find it.
      const event: SessionEvent = { type: 'state', sessionId: 'session-floor', state: 'returned' };
      await postgres.sql(
        `INSERT INTO floor.bus_events (session_id, body) VALUES ('session-floor', '${JSON.stringify(event)}')`,
      );
      await eventually(() => (events.length > 0 ? true : undefined), 5_000);
      assert.deepEqual(events, [event]);
    } finally {
      await storage.close();
    }
  });
});
