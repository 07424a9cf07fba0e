// Behaviour every backend's typed repositories must have (storage/payments.ts, link-sessions.ts,
// removals.ts), as node:test suites that take a factory: test/node/storage/ runs them on memory, SQLite
// and Redis (and a new backend joins them there), so they all answer the same.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../proxy/common/ids.ts';
import type { Storage } from '../../proxy/storage/storage.ts';
import type { PaymentRecord } from '../../proxy/storage/payments.ts';

const RETENTION_MS = 60_000;

/** A pending payment of a fresh order, its lease ending `leaseMs` from now. */
export function pendingPayment(leaseMs = 30_000, order = `order-${newId()}`): PaymentRecord {
  return {
    paymentId: `pay_${newId()}`,
    merchantTransactionId: order,
    merchantUserId: 'user-1',
    state: 'pending',
    leaseExpiresAt: Date.now() + leaseMs,
    amount: '10.00',
    currency: 'USD',
    accountLabel: 'Checking ••••4321',
    fiName: 'Bank',
    fiAccountType: 'CHECKING',
    linkRef: newId(),
    paidAt: new Date().toISOString(),
    requestDigest: 'digest',
  };
}

type Repositories = Pick<Storage, 'payments' | 'linkSessions' | 'removals' | 'close'>;

export function describeStorageContract(name: string, makeStorage: () => Promise<Repositories> | Repositories): void {
  async function withStorage(run: (storage: Repositories) => Promise<void>) {
    const storage = await makeStorage();
    try {
      await run(storage);
    } finally {
      await storage.close();
    }
  }

  describe(`${name}: PaymentStore contract`, () => {
    test('claims an order once: a second claim gets the first payment', () =>
      withStorage(async ({ payments }) => {
        const first = pendingPayment();
        assert.deepEqual(await payments.claim(first, RETENTION_MS), { claimed: true });
        const second = { ...pendingPayment(), merchantTransactionId: first.merchantTransactionId };
        assert.deepEqual(await payments.claim(second, RETENTION_MS), { claimed: false, existing: first });
        assert.deepEqual(await payments.get(first.merchantTransactionId), first);
        assert.equal(await payments.get('no-such-order'), undefined);
      }));

    test('lets exactly one of many concurrent claims of one order win', () =>
      withStorage(async ({ payments }) => {
        const order = `order-${newId()}`;
        const results = await Promise.all(
          Array.from({ length: 8 }, () => payments.claim(pendingPayment(30_000, order), RETENTION_MS)),
        );
        assert.equal(results.filter((result) => result.claimed).length, 1);
      }));

    test('finishes a payment only for its holder, and never changes a completed one', () =>
      withStorage(async ({ payments }) => {
        const pending = pendingPayment();
        await payments.claim(pending, RETENTION_MS);
        const { leaseExpiresAt: _lease, ...rest } = pending;
        assert.equal(
          await payments.finish({ ...rest, paymentId: 'pay_other', state: 'completed' }, RETENTION_MS),
          false,
        );
        const completed: PaymentRecord = {
          ...rest,
          state: 'completed',
          providerStatus: 201,
          providerResponse: {},
          transactionId: 't-1',
          transactionStatus: 'APPROVED',
        };
        assert.equal(await payments.finish(completed, RETENTION_MS), true);
        assert.deepEqual(await payments.get(pending.merchantTransactionId), completed);
        assert.equal(
          await payments.finish({ ...completed, state: 'unknown' }, RETENTION_MS),
          false,
          'a completed payment stays completed',
        );
        assert.equal(
          await payments.release(pending.merchantTransactionId, pending.paymentId),
          false,
          'a completed payment is never freed',
        );
        assert.equal((await payments.get(pending.merchantTransactionId))?.state, 'completed');
      }));

    test('frees an order for its holder only; the order may then be claimed again', () =>
      withStorage(async ({ payments }) => {
        const pending = pendingPayment();
        await payments.claim(pending, RETENTION_MS);
        assert.equal(await payments.release(pending.merchantTransactionId, 'pay_other'), false);
        assert.equal(await payments.release(pending.merchantTransactionId, pending.paymentId), true);
        assert.equal(await payments.get(pending.merchantTransactionId), undefined);
        const again = { ...pendingPayment(), merchantTransactionId: pending.merchantTransactionId };
        assert.deepEqual(await payments.claim(again, RETENTION_MS), { claimed: true });
      }));

    test('turns a pending payment whose lease ended unknown, once, and leaves live leases alone', () =>
      withStorage(async ({ payments }) => {
        const dead = pendingPayment(-1);
        const live = pendingPayment(60_000);
        await payments.claim(dead, RETENTION_MS);
        await payments.claim(live, RETENTION_MS);
        const expired = await payments.expireLeases(Date.now(), 100);
        const mine = expired.filter((p) => p.merchantTransactionId === dead.merchantTransactionId);
        assert.equal(mine.length, 1);
        assert.equal(mine[0]!.state, 'unknown');
        assert.equal(mine[0]!.leaseExpiresAt, undefined);
        assert.equal(
          expired.some((p) => p.merchantTransactionId === live.merchantTransactionId),
          false,
        );
        assert.equal(
          (await payments.expireLeases(Date.now(), 100)).some(
            (p) => p.merchantTransactionId === dead.merchantTransactionId,
          ),
          false,
          'told once',
        );
        assert.equal((await payments.get(dead.merchantTransactionId))?.state, 'unknown');
        assert.equal((await payments.get(live.merchantTransactionId))?.state, 'pending');
        // The holder that comes back late with the provider's answer still records it.
        const { leaseExpiresAt: _lease, ...rest } = dead;
        assert.equal(await payments.finish({ ...rest, state: 'completed', providerStatus: 201 }, RETENTION_MS), true);
      }));

    /** A payment of a fresh order, claimed and left `unknown` (its call may have charged). */
    async function unknownPayment(payments: Repositories['payments']): Promise<PaymentRecord> {
      const pending = pendingPayment();
      assert.deepEqual(await payments.claim(pending, RETENTION_MS), { claimed: true });
      const { leaseExpiresAt: _lease, ...rest } = pending;
      const unknown: PaymentRecord = { ...rest, state: 'unknown' };
      assert.equal(await payments.finish(unknown, RETENTION_MS), true);
      return unknown;
    }
    const at = () => new Date().toISOString();

    test("records a reconciliation, never a deletion: not-charged stays on record, and the order's next payment keeps it among the earlier ones", () =>
      withStorage(async ({ payments }) => {
        const unknown = await unknownPayment(payments);
        const order = unknown.merchantTransactionId;
        assert.deepEqual(await payments.earlier(order), []);
        const reconciliation = { result: 'not-charged' as const, at: at() };
        const notCharged = await payments.reconcile(order, unknown.paymentId, reconciliation, RETENTION_MS);
        assert.deepEqual(notCharged, { ...unknown, state: 'not-charged', reconciled: reconciliation });
        assert.deepEqual(await payments.get(order), notCharged, "the reconciled payment is still the order's record");
        // The order may be paid again, by a new payment; the reconciled one is kept, as it was.
        const next = { ...pendingPayment(), merchantTransactionId: order };
        assert.deepEqual(await payments.claim(next, RETENTION_MS), { claimed: true });
        assert.deepEqual(await payments.get(order), next);
        assert.deepEqual(await payments.earlier(order), [notCharged]);
        // A second mistaken reconciliation of the same order stacks, oldest first.
        const { leaseExpiresAt: _lease, ...rest } = next;
        assert.equal(await payments.finish({ ...rest, state: 'unknown' }, RETENTION_MS), true);
        const again = await payments.reconcile(
          order,
          next.paymentId,
          { result: 'not-charged', at: at() },
          RETENTION_MS,
        );
        assert.ok(again);
        const third = { ...pendingPayment(), merchantTransactionId: order };
        assert.deepEqual(await payments.claim(third, RETENTION_MS), { claimed: true });
        assert.deepEqual(
          (await payments.earlier(order)).map((p) => p.paymentId),
          [unknown.paymentId, next.paymentId],
        );
        assert.deepEqual(await payments.earlier('no-such-order'), []);
      }));

    test("reconciles only the order's current unknown payment, once; paid completes it with the provider's transaction id", () =>
      withStorage(async ({ payments }) => {
        const pending = pendingPayment();
        await payments.claim(pending, RETENTION_MS);
        const paid = { result: 'paid' as const, at: at(), transactionId: 'txn-provider-1' };
        assert.equal(
          await payments.reconcile(pending.merchantTransactionId, pending.paymentId, paid, RETENTION_MS),
          undefined,
          'a pending payment is not reconciled',
        );
        const unknown = await unknownPayment(payments);
        const order = unknown.merchantTransactionId;
        assert.equal(
          await payments.reconcile(order, 'pay_other', paid, RETENTION_MS),
          undefined,
          "another payment's id",
        );
        assert.equal(await payments.reconcile('no-such-order', unknown.paymentId, paid, RETENTION_MS), undefined);
        const completed = await payments.reconcile(order, unknown.paymentId, paid, RETENTION_MS);
        assert.deepEqual(completed, {
          ...unknown,
          state: 'completed',
          reconciled: paid,
          transactionId: 'txn-provider-1',
        });
        assert.deepEqual(await payments.get(order), completed);
        assert.equal(
          await payments.reconcile(order, unknown.paymentId, { result: 'not-charged', at: at() }, RETENTION_MS),
          undefined,
          'reconciled once',
        );
        assert.equal(
          (await payments.claim({ ...pendingPayment(), merchantTransactionId: order }, RETENTION_MS)).claimed,
          false,
          'a paid order is not claimed again',
        );
      }));

    test('a reconciliation wins over a late holder: a not-charged payment is never finished or released by it', () =>
      withStorage(async ({ payments }) => {
        const unknown = await unknownPayment(payments);
        const order = unknown.merchantTransactionId;
        await payments.reconcile(order, unknown.paymentId, { result: 'not-charged', at: at() }, RETENTION_MS);
        assert.equal(
          await payments.finish({ ...unknown, state: 'completed', providerStatus: 201 }, RETENTION_MS),
          false,
        );
        assert.equal(await payments.release(order, unknown.paymentId), false);
        assert.equal((await payments.get(order))?.state, 'not-charged');
      }));

    test('lets exactly one of many concurrent claims take an order reconciled not-charged, and keeps the reconciled payment once', () =>
      withStorage(async ({ payments }) => {
        const unknown = await unknownPayment(payments);
        const order = unknown.merchantTransactionId;
        await payments.reconcile(order, unknown.paymentId, { result: 'not-charged', at: at() }, RETENTION_MS);
        const results = await Promise.all(
          Array.from({ length: 8 }, () => payments.claim(pendingPayment(30_000, order), RETENTION_MS)),
        );
        assert.equal(results.filter((result) => result.claimed).length, 1);
        assert.deepEqual(
          (await payments.earlier(order)).map((p) => p.paymentId),
          [unknown.paymentId],
        );
      }));

    test('keeps a payment for the retention only', () =>
      withStorage(async ({ payments }) => {
        const pending = pendingPayment();
        await payments.claim(pending, 150);
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(await payments.get(pending.merchantTransactionId), undefined);
      }));
  });

  describe(`${name}: LinkSessionStore contract`, () => {
    test('stores a link session under its id, with every field', () =>
      withStorage(async ({ linkSessions }) => {
        const id = newId();
        const record = {
          merchantUserId: 'u-1',
          merchantTransactionId: 'o-1',
          createdAt: 1,
          expiresAt: 2,
          amount: '5.00',
          consumer: { firstName: 'Ada' },
          savedAccounts: [{ id: 'a' }],
        };
        await linkSessions.create(id, record, RETENTION_MS);
        assert.deepEqual(await linkSessions.get(id), record);
        assert.equal(await linkSessions.get(newId()), undefined);
        await assert.rejects(linkSessions.create(id, record, RETENTION_MS), 'an id is never overwritten');
      }));

    test("keeps a hosted page's request (completion URI, state) with its link session", () =>
      withStorage(async ({ linkSessions }) => {
        const id = newId();
        const hosted = { completionRedirectUri: 'myapp://linked?order=o-2', state: 'csrf-1/2+3' };
        const record = {
          merchantUserId: 'u-2',
          merchantTransactionId: 'o-2',
          createdAt: 1,
          expiresAt: 2,
          language: 'es',
          hosted,
        };
        await linkSessions.create(id, record, RETENTION_MS);
        assert.deepEqual((await linkSessions.get(id))?.hosted, hosted);
      }));

    test("counts a link session's uses up to a maximum, atomically; an unknown one has none", () =>
      withStorage(async ({ linkSessions }) => {
        const id = newId();
        await linkSessions.create(
          id,
          { merchantUserId: 'u', merchantTransactionId: 'o', createdAt: 1, expiresAt: 2 },
          RETENTION_MS,
        );
        const results = await Promise.all(Array.from({ length: 5 }, () => linkSessions.use(id, 3)));
        assert.equal(results.filter(Boolean).length, 3);
        assert.equal(await linkSessions.use(id, 3), false);
        assert.equal(await linkSessions.use(newId(), 3), false);
      }));

    test('forgets a link session after its retention', () =>
      withStorage(async ({ linkSessions }) => {
        const id = newId();
        await linkSessions.create(
          id,
          { merchantUserId: 'u', merchantTransactionId: 'o', createdAt: 1, expiresAt: 2 },
          150,
        );
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(await linkSessions.get(id), undefined);
      }));
  });

  describe(`${name}: RemovalStore contract`, () => {
    test('records a removal once per user and account, for that user only, until forgotten', () =>
      withStorage(async ({ removals }) => {
        const removal = {
          merchantUserId: `u-${newId()}`,
          accountId: 'acct-1',
          removedAt: new Date().toISOString(),
          merchantTransactionId: 'o-1',
        };
        assert.equal(await removals.isRemoved(removal.merchantUserId, 'acct-1'), false);
        assert.equal(await removals.record(removal), true);
        assert.equal(await removals.record(removal), false);
        assert.equal(await removals.isRemoved(removal.merchantUserId, 'acct-1'), true);
        assert.equal(await removals.isRemoved('someone-else', 'acct-1'), false);
        assert.equal(await removals.isRemoved(removal.merchantUserId, 'acct-2'), false);
        await removals.forget(removal.merchantUserId, 'acct-1');
        assert.equal(await removals.isRemoved(removal.merchantUserId, 'acct-1'), false);
      }));
  });
}
