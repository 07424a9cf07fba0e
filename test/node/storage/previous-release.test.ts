// A data directory written by the previous release (better-sqlite3, schema 2: fixtures/previous-release,
// two orders paid in sandbox mode) opens on this one: it is migrated to schema 6 and converted to
// incremental vacuum at the first start, and keeps its payments — paying one of its orders again is
// refused with the first payment. The proxy's clock is set a day after the file was written, so the
// payments (kept 30 days) are within their retention whatever day the test runs.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import express from 'express';
import { createLogger, createObvProxy, createOutboxCodec, createStorage } from '../../../proxy/index.ts';
import { DATABASE_FILE } from '../../../proxy/storage/sqlite/database.ts';
import { sandboxProxyConfig, TEST_MERCHANT_API_KEY } from '../../helpers/proxy-harness.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/previous-release/', import.meta.url));
/** When the fixture's orders were paid (their records' `paidAt`). */
const WRITTEN_AT = Date.parse('2026-11-28T10:09:36.913Z');
const PAID = [
  {
    order: 'order-prev-paid-1',
    paymentId: 'pay_2a3mFdho6jzjXKjvuWYb4Q',
    transactionId: 'txn_-xGMc46a-bNmHkG2DWYDFw',
    linkRef: 'GIEmFUS8859xtaM3RsFF9A',
  },
  {
    order: 'order-prev-paid-2',
    paymentId: 'pay_ys_nTDo7Vbrv0VtRwoWVwg',
    transactionId: 'txn_muV6t19BgJlYkJrrDy4dDw',
    linkRef: 'EnGbx2sevMoA8B7vs0NJcw',
  },
];
const AUTH = { authorization: `Bearer ${TEST_MERCHANT_API_KEY}` };

const dataDir = mkdtempSync(join(tmpdir(), 'obv-previous-release-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

test('a data directory of the previous release opens, is migrated, and refuses to pay its paid orders again, with the first payment', async () => {
  cpSync(FIXTURE, dataDir, { recursive: true });
  // Its merchant events, stored in the clear (schema 5 and before).
  const before = new DatabaseSync(join(dataDir, DATABASE_FILE));
  const clearBodies = before
    .prepare('SELECT body FROM events ORDER BY seq')
    .all()
    .map((row) => String(row.body));
  before.close();
  assert.equal(clearBodies.length, 4);
  assert.ok(clearBodies.every((body) => body.includes('"user-42"')));
  const app = express();
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // No upstream call is expected: the provider's address is one nothing listens on.
  const proxy = createObvProxy({
    ...sandboxProxyConfig('http://127.0.0.1:9', origin),
    storage: 'sqlite',
    dataDir,
    logger: createLogger('silent'),
    now: () => WRITTEN_AT + 24 * 3_600_000,
  });
  app.use(proxy.mountPath, proxy.router);
  const base = `${origin}${proxy.mountPath}`;
  try {
    for (const paid of PAID) {
      const read = await fetch(`${base}/transactions/${paid.order}`, { headers: AUTH });
      assert.equal(read.status, 200, paid.order);
      const payment = (await read.json()) as Record<string, unknown>;
      assert.deepEqual(
        [payment.paymentId, payment.state, payment.transactionId],
        [paid.paymentId, 'completed', paid.transactionId],
      );
    }
    const [first] = PAID;
    const again = await fetch(`${base}/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...AUTH },
      body: JSON.stringify({
        linkRef: first!.linkRef,
        merchantUserId: 'user-42',
        merchantTransactionId: first!.order,
        amount: '49.99',
        currency: 'USD',
      }),
    });
    assert.equal(again.status, 409);
    const problem = (await again.json()) as { type: string; payment?: Record<string, unknown> };
    assert.equal(problem.type, 'urn:obv-link:problem:order-already-paid');
    assert.deepEqual(
      [problem.payment?.paymentId, problem.payment?.transactionId],
      [first!.paymentId, first!.transactionId],
    );
  } finally {
    await proxy.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  // Its events, sealed at the open, list with the bodies they had (what is signed and sent).
  const storage = createStorage({
    kind: 'sqlite',
    dataDir,
    logger: createLogger('silent'),
    outboxCodec: createOutboxCodec(proxy.config.sealingKeys ?? []),
  });
  try {
    const listed = await storage.eventOutbox.list({ limit: 10 }, WRITTEN_AT);
    assert.deepEqual(
      listed?.events.map((stored) => stored.body),
      clearBodies,
    );
  } finally {
    await storage.close();
  }
  const file = new DatabaseSync(join(dataDir, DATABASE_FILE), { readOnly: true });
  try {
    assert.equal(file.prepare('PRAGMA user_version').get()?.user_version, 6);
    assert.equal(file.prepare('PRAGMA auto_vacuum').get()?.auto_vacuum, 2, 'converted to incremental vacuum');
    const indexes = file
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'")
      .all()
      .map((row) => row.name);
    for (const index of [
      'events_retired',
      'payments_purge',
      'payment_keys_purge',
      'link_sessions_purge',
      'idempotency_claims_purge',
      'idempotency_claims_in_flight',
    ])
      assert.ok(indexes.includes(index), index);
    assert.equal(file.prepare('SELECT count(*) AS n FROM payments').get()?.n, 2);
    const events = file.prepare('SELECT body, user_tag FROM events').all();
    assert.equal(events.length, 4);
    for (const row of events) {
      assert.match(String(row.body), /^obv1\./, 'sealed at the first start');
      assert.ok(row.user_tag && !String(row.user_tag).includes('user-42'), 'tagged with a keyed hash of its user');
    }
    assert.equal(
      file.prepare('SELECT count(*) AS n FROM earlier_payments').get()?.n,
      0,
      'the table of earlier payments, added by schema 5',
    );
  } finally {
    file.close();
  }
});
