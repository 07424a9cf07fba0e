// Forgetting a shopper (DELETE /users/{merchantUserId}, proxy.forgetUser): behind the API key, the id
// checked, the counts answered and 0 the second time; afterwards the user's saved account is neither
// offered nor paid with, the merchant hears `saved_account.removed`, and the SQLite file itself holds
// none of the user's sessions, link sessions, saved accounts or payment details.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { EVENTS_SECRET, startMerchantEndpoint, type MerchantEndpoint } from '../../helpers/merchant-endpoint.ts';
import { createLogger, createStorage, type SavedAccount, type Storage } from '../../../proxy/index.ts';
import { DATABASE_FILE } from '../../../proxy/storage/sqlite/database.ts';
import { CONSENT_VERSION } from '../../../proxy/words/consent.ts';

const AUTH = `Bearer ${TEST_MERCHANT_API_KEY}`;

describe('forgetting a shopper', () => {
  let pair: ProxyPair;
  let endpoint: MerchantEndpoint;
  let storage: Storage;
  const dataDir = mkdtempSync(join(tmpdir(), 'obv-forget-'));
  const user = `user-${randomUUID()}`;
  const other = `user-${randomUUID()}`;

  before(async () => {
    endpoint = await startMerchantEndpoint();
    storage = createStorage({ kind: 'sqlite', dataDir, logger: createLogger('silent') });
    pair = await startProxyPair({
      proxy: {
        backend: storage,
        eventsUrl: endpoint.url,
        eventsSecrets: [EVENTS_SECRET],
        eventTimings: { retryDelaysMs: [50], attemptTimeoutMs: 500, pollIntervalMs: 25, leaseMs: 2_000 },
      },
    });
  });
  after(async () => {
    await pair?.close();
    await storage?.close();
    await endpoint?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${pair.baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', origin: pair.origin, ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const server = (method: string, path: string, body?: unknown) => call(method, path, body, { authorization: AUTH });
  const checkout = (merchantUserId: string, extra: Record<string, unknown> = {}) => ({
    merchantUserId,
    merchantTransactionId: `order-${randomUUID()}`,
    amount: '42.50',
    currency: 'USD',
    consumer: { firstName: 'Ana', lastName: 'López', email: 'ana.lopez@example.com' },
    language: 'en-US',
    ...extra,
  });
  const pay = (linkRef: string, purchase: ReturnType<typeof checkout>) =>
    server('POST', '/transactions', {
      linkRef,
      merchantUserId: purchase.merchantUserId,
      merchantTransactionId: purchase.merchantTransactionId,
      amount: purchase.amount,
      currency: 'USD',
    });
  const forget = (id: string) => server('DELETE', `/users/${encodeURIComponent(id)}`);

  /** A consented success for `merchantUserId`: its saved account, link reference and order. */
  async function linkAndSave(merchantUserId: string) {
    const purchase = checkout(merchantUserId, { allowSaving: true });
    const { linkToken } = (await (await server('POST', '/link-sessions', purchase)).json()) as { linkToken: string };
    const started = await call('POST', '/verifications', { linkToken, consent: CONSENT_VERSION });
    assert.equal(started.status, 201, await started.clone().text());
    const { sessionId, consumerUrl } = (await started.json()) as { sessionId: string; consumerUrl: string };
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const view = (await (await call('POST', '/sessions/lookup', { sessionId })).json()) as {
      outcome: { linkRef: string };
    };
    const linked = (await (await server('GET', `/links/${view.outcome.linkRef}`)).json()) as {
      savedAccount: SavedAccount;
    };
    assert.ok(linked.savedAccount, 'the consented success saved the account');
    return { saved: linked.savedAccount, linkRef: view.outcome.linkRef, purchase };
  }

  const events = async () =>
    (
      (await (await server('GET', '/events?limit=100')).json()) as {
        events: { type: string; data: Record<string, unknown> }[];
      }
    ).events;

  test('the route is behind the API key and checks the id; the saved account is never offered or paid with again; the file holds nothing of the user', async () => {
    const mine = await linkAndSave(user);
    const theirs = await linkAndSave(other);
    assert.equal((await pay(mine.linkRef, mine.purchase)).status, 201);
    // A later checkout offering the saved account, made before the erasure.
    const next = checkout(user, { savedAccounts: [mine.saved.sealed] });
    assert.equal((await server('POST', '/link-sessions', next)).status, 201);

    const refused = await call('DELETE', `/users/${user}`);
    assert.equal(refused.status, 401);
    assert.equal((await call('DELETE', `/users/${user}`, undefined, { authorization: 'Bearer wrong' })).status, 401);
    const bad = await forget('x'.repeat(101));
    assert.equal(bad.status, 400);
    assert.match(bad.headers.get('content-type') ?? '', /application\/problem\+json/);
    const problem = (await bad.json()) as { errors: { path: string }[] };
    assert.deepEqual(
      problem.errors.map((error) => error.path),
      ['merchantUserId'],
    );
    assert.equal((await forget('   ')).status, 400, 'a blank id');

    const answered = await forget(user);
    assert.equal(answered.status, 200, await answered.clone().text());
    assert.equal(answered.headers.get('cache-control'), 'no-store');
    assert.deepEqual(await answered.json(), {
      savedAccounts: 1,
      sessions: 1,
      linkSessions: 2,
      payments: 1,
      events: 1,
      removals: 0,
    });
    const again = await forget(user);
    assert.deepEqual(await again.json(), {
      savedAccounts: 0,
      sessions: 0,
      linkSessions: 0,
      payments: 0,
      events: 0,
      removals: 0,
    });

    // Never offered again, whatever copy the merchant kept; the old reference redeems nothing.
    const offered = await server('POST', '/link-sessions', checkout(user, { savedAccounts: [mine.saved.sealed] }));
    assert.equal(offered.status, 410);
    assert.deepEqual(
      ((await offered.json()) as { errors: { path: string }[] }).errors.map((error) => error.path),
      ['savedAccounts.0'],
    );
    const reauthorize = await server('POST', '/link-sessions', checkout(user, { reauthorize: mine.saved.sealed }));
    assert.equal(reauthorize.status, 410);
    assert.equal((await server('GET', `/links/${mine.linkRef}`)).status, 404);
    assert.equal((await pay(mine.linkRef, checkout(user))).status, 404);
    // The order's payment stays on record for reconciliation, without the user.
    const payment = (await (
      await server('GET', `/transactions/${mine.purchase.merchantTransactionId}`)
    ).json()) as Record<string, unknown>;
    assert.deepEqual(
      [payment.state, payment.amount, payment.merchantUserId, payment.accountLabel],
      ['completed', mine.purchase.amount, undefined, ''],
    );
    // Another user is untouched.
    assert.equal(
      (await server('POST', '/link-sessions', checkout(other, { savedAccounts: [theirs.saved.sealed] }))).status,
      201,
    );
    assert.equal((await server('GET', `/links/${theirs.linkRef}`)).status, 200);

    const listed = await events();
    const removed = listed.filter((event) => event.type === 'saved_account.removed');
    assert.deepEqual(
      removed.map((event) => [event.data.merchantUserId, event.data.accountId, event.data.reason]),
      [[user, mine.saved.accountId, 'forgotten']],
    );
    const succeeded = listed.filter((event) => event.type === 'link.succeeded' && event.data.merchantUserId === user);
    assert.equal(succeeded.length, 1);
    assert.equal(succeeded[0]!.data.savedAccount, undefined, 'the saved account and consent are gone from the event');

    await pair.close();
    await storage.close();
    const db = new DatabaseSync(join(dataDir, DATABASE_FILE), { readOnly: true });
    try {
      const rows = (sql: string) => db.prepare(sql).all() as Record<string, string>[];
      const text = (sql: string) =>
        rows(sql)
          .map((row) => Object.values(row).join(' '))
          .join('\n');
      assert.ok(!text('SELECT base FROM sessions').includes(user), 'no session of the user');
      assert.ok(text('SELECT base FROM sessions').includes(other), "the other user's sessions stay");
      assert.ok(!text('SELECT record FROM link_sessions').includes(user), 'no link session of the user');
      const payments = text('SELECT record FROM payments');
      assert.ok(!payments.includes(user), 'no payment names the user');
      assert.ok(!payments.includes(mine.saved.accountLabel), "nor the user's account");
      assert.ok(payments.includes(mine.purchase.merchantTransactionId), 'the order stays');
      const bodies = text('SELECT body FROM events');
      assert.ok(!bodies.includes(mine.saved.sealed), "no event holds the user's saved account");
      assert.ok(bodies.includes(theirs.saved.sealed), "the other user's do");
      assert.deepEqual(
        rows("SELECT account_id FROM saved_account_removals WHERE merchant_user_id = '" + user + "'").map(
          (row) => row.account_id,
        ),
        [''],
        'one cut-off row',
      );
    } finally {
      db.close();
    }
  });
});
