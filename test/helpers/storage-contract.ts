// Behaviour every backend's typed repositories must have (storage/payments.ts, link-sessions.ts,
// removals.ts), as node:test suites that take a factory: test/node/storage/ runs them on memory, SQLite
// and Redis (and a new backend joins them there), so they all answer the same.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../proxy/common/ids.ts';
import type { Storage } from '../../proxy/storage/storage.ts';
import type { PaymentRecord } from '../../proxy/storage/payments.ts';
import { buildEvent } from '../../proxy/storage/events.ts';
import { randomEventId } from '../../proxy/events/ids.ts';
import { forgottenPayment } from '../../proxy/storage/forgotten.ts';
import type { SessionRecord, StoredOutcome } from '../../proxy/storage/sessions.ts';
import { sequentialOutcomeWriter, type OutcomeWrite } from '../../proxy/storage/outcome-write.ts';

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

type Repositories = Pick<
  Storage,
  'payments' | 'linkSessions' | 'removals' | 'sessionStore' | 'eventOutbox' | 'outcomeWriter' | 'close'
>;

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

  describe(`${name}: forgetting a user`, () => {
    const userPair = () => ({ user: `u-${newId()}`, other: `v-${newId()}` });
    const session = (merchantUserId: string): SessionRecord => ({
      sessionId: newId(),
      notificationRef: newId(),
      consumerUrl: 'https://bank.example/step',
      state: 'pending',
      createdAt: Date.now(),
      expiresAt: Date.now() + RETENTION_MS,
      merchantUserId,
      merchantTransactionId: `order-${newId()}`,
    });
    const savedAccount = {
      sealed: 'obv1.sealed-for-the-user',
      accountId: `sa_${newId()}`,
      accountLabel: 'Checking ••••4321',
      fiName: 'Bank',
      fiAccountType: 'CHECKING',
      linkedAt: new Date().toISOString(),
    };

    test("deletes the user's sessions (outcome and saved account with them) and answers them; another user's stay", () =>
      withStorage(async ({ sessionStore }) => {
        const { user, other } = userPair();
        const mine = session(user);
        const theirs = session(other);
        await sessionStore.create(mine);
        await sessionStore.create(theirs);
        await sessionStore.settle(mine.sessionId, {
          status: 'success',
          linkRef: newId(),
          sealedAccountToken: 'sealed-token',
          accountLabel: savedAccount.accountLabel,
          fiName: savedAccount.fiName,
          fiAccountType: savedAccount.fiAccountType,
          savedAccount,
        });
        const forgotten = await sessionStore.forgetUser(user);
        assert.deepEqual(
          forgotten.map((record) => [
            record.sessionId,
            record.outcome?.status === 'success' && record.outcome.savedAccount,
          ]),
          [[mine.sessionId, savedAccount]],
        );
        assert.equal(await sessionStore.get(mine.sessionId), undefined);
        assert.equal(await sessionStore.getByNotificationRef(mine.notificationRef), undefined);
        assert.equal((await sessionStore.get(theirs.sessionId))?.merchantUserId, other);
        assert.deepEqual(await sessionStore.forgetUser(user), [], 'a second time finds none');
      }));

    test("deletes the user's link sessions and answers their records; another user's stay", () =>
      withStorage(async ({ linkSessions }) => {
        const { user, other } = userPair();
        const [mine, theirs] = [newId(), newId()];
        const record = (merchantUserId: string) => ({
          merchantUserId,
          merchantTransactionId: 'o-1',
          createdAt: 1,
          expiresAt: 2,
          sealedConsumer: 'sealed-name-and-email',
          savedAccounts: [{ id: 'offered-1', ...savedAccount }],
        });
        await linkSessions.create(mine, record(user), RETENTION_MS);
        await linkSessions.create(theirs, record(other), RETENTION_MS);
        assert.deepEqual(await linkSessions.forgetUser(user), [record(user)]);
        assert.equal(await linkSessions.get(mine), undefined);
        assert.equal(await linkSessions.use(mine, 5), false);
        assert.deepEqual(await linkSessions.get(theirs), record(other));
        assert.deepEqual(await linkSessions.forgetUser(user), []);
      }));

    test("keeps only what a reconciliation needs of the user's payments, earlier ones too; another user's stay", () =>
      withStorage(async ({ payments }) => {
        const { user, other } = userPair();
        const first = { ...pendingPayment(), merchantUserId: user };
        const order = first.merchantTransactionId;
        await payments.claim(first, RETENTION_MS);
        const { leaseExpiresAt: _lease, ...unknown } = { ...first, state: 'unknown' as const };
        assert.equal(await payments.finish(unknown, RETENTION_MS), true);
        await payments.reconcile(
          order,
          first.paymentId,
          { result: 'not-charged', at: new Date().toISOString() },
          RETENTION_MS,
        );
        const second = { ...pendingPayment(30_000, order), merchantUserId: user };
        assert.deepEqual(await payments.claim(second, RETENTION_MS), { claimed: true });
        const theirs = { ...pendingPayment(), merchantUserId: other };
        await payments.claim(theirs, RETENTION_MS);

        assert.equal(await payments.forgetUser(user), 2);
        assert.deepEqual(await payments.get(order), forgottenPayment(second));
        const [earlier] = await payments.earlier(order);
        assert.equal(earlier?.paymentId, first.paymentId);
        assert.deepEqual(
          [earlier?.merchantUserId, earlier?.accountLabel, earlier?.state, earlier?.amount],
          [undefined, '', 'not-charged', first.amount],
        );
        assert.deepEqual(await payments.get(theirs.merchantTransactionId), theirs);
        assert.equal(await payments.forgetUser(user), 0, 'a second time finds none');
      }));

    test("erases the saved account and consent from the user's events, whatever their delivery; another user's stay", () =>
      withStorage(async ({ eventOutbox }) => {
        const { user, other } = userPair();
        const consent = {
          version: 'v1',
          lang: 'en' as const,
          checkbox: 'Save it',
          text: 'words',
          acceptedAt: new Date().toISOString(),
          ip: '203.0.113.7',
          userAgent: 'SecretBrowser/1.0',
        };
        const linked = (merchantUserId: string) =>
          buildEvent(
            randomEventId(),
            'link.succeeded',
            {
              merchantUserId,
              linkRef: newId(),
              accountLabel: 'Checking ••••4321',
              fiName: 'Bank',
              fiAccountType: 'CHECKING',
              savedAccount: { ...savedAccount, consent },
            },
            Date.now(),
          );
        const mine = linked(user);
        const theirs = linked(other);
        const paid = buildEvent(
          randomEventId(),
          'payment.succeeded',
          { merchantUserId: user, paymentId: 'pay_1', transactionId: 't-1', transactionStatus: 'OK' },
          Date.now(),
        );
        for (const event of [mine, theirs, paid]) await eventOutbox.append(event, Date.now());
        await eventOutbox.acknowledge(mine.id, Date.now());

        assert.equal(await eventOutbox.forgetUser(user), 1);
        const kept = await eventOutbox.get(mine.id);
        assert.equal(kept?.event.type === 'link.succeeded' && kept.event.data.savedAccount, undefined);
        assert.equal(kept?.event.data.merchantUserId, user);
        assert.equal(kept?.delivery.state, 'delivered', 'its delivery is as it was');
        assert.ok(!kept?.body.includes(consent.ip) && !kept?.body.includes(savedAccount.sealed), kept?.body);
        assert.deepEqual((await eventOutbox.get(paid.id))?.event, paid);
        assert.deepEqual((await eventOutbox.get(theirs.id))?.event, theirs);
        assert.equal(await eventOutbox.forgetUser(user), 0);
      }));

    test("replaces the user's removals by one cut-off, moved to the last forget; another user's stay", () =>
      withStorage(async ({ removals }) => {
        const { user, other } = userPair();
        const removal = (merchantUserId: string, accountId: string) => ({
          merchantUserId,
          accountId,
          removedAt: new Date().toISOString(),
        });
        await removals.record(removal(user, 'sa_1'));
        await removals.record(removal(user, 'sa_2'));
        await removals.record(removal(other, 'sa_1'));
        assert.equal(await removals.forgottenAt(user), undefined);
        assert.equal(await removals.forgetUser(user, '2026-01-01T00:00:00.000Z'), 2);
        assert.equal(await removals.forgottenAt(user), '2026-01-01T00:00:00.000Z');
        assert.equal(await removals.isRemoved(user, 'sa_1'), false);
        assert.equal(await removals.isRemoved(other, 'sa_1'), true);
        assert.equal(await removals.forgottenAt(other), undefined);
        assert.equal(await removals.forgetUser(user, '2026-02-01T00:00:00.000Z'), 0);
        assert.equal(await removals.forgottenAt(user), '2026-02-01T00:00:00.000Z');
      }));
  });
  describe(`${name}: a notification's writes (OutcomeWriter)`, () => {
    /** The backend's own writer, or the one call at a time the proxy uses where it has none (services.ts). */
    const writerOf = (storage: Repositories) =>
      storage.outcomeWriter ?? sequentialOutcomeWriter(storage.sessionStore, storage.eventOutbox);
    const pending = (): SessionRecord => ({
      sessionId: newId(),
      notificationRef: newId(),
      consumerUrl: 'https://bank.example/step',
      state: 'pending',
      createdAt: Date.now(),
      expiresAt: Date.now() + RETENTION_MS,
      merchantUserId: 'user-1',
    });
    const success = (): StoredOutcome => ({
      status: 'success',
      linkRef: newId(),
      sealedAccountToken: 'obv1.sealed',
      accountLabel: 'Checking ••••4321',
      fiName: 'Bank',
      fiAccountType: 'CHECKING',
    });
    function write(record: SessionRecord, outcome: StoredOutcome, webhookId = newId()): OutcomeWrite {
      const now = Date.now();
      const linkRef = outcome.status === 'success' ? outcome.linkRef : 'none';
      return {
        sessionId: record.sessionId,
        outcome,
        webhook: { key: `webhook:${webhookId}`, value: record.sessionId, ttlMs: RETENTION_MS },
        markers: [{ key: `link:${linkRef}`, value: record.sessionId, ttlMs: RETENTION_MS }],
        ifStored: {
          markers: [{ key: `bank-step-outcome:${record.sessionId}`, value: String(now), ttlMs: RETENTION_MS }],
          event: buildEvent(randomEventId(), 'link.cancelled', { merchantUserId: 'user-1' }, now),
        },
        nowMs: now,
      };
    }

    test('stores the outcome with its markers and its event, durable when it resolves', () =>
      withStorage(async (storage) => {
        const record = pending();
        await storage.sessionStore.create(record);
        const outcome = success();
        const asked = write(record, outcome);
        const result = await writerOf(storage).recordOutcome(asked);
        assert.ok(!result.conflict && result.stored);
        assert.equal(result.record.state, 'succeeded');
        assert.deepEqual(result.record.outcome, outcome);
        assert.equal((await storage.sessionStore.get(record.sessionId))?.state, 'succeeded');
        for (const marker of [asked.webhook, ...asked.markers, ...asked.ifStored!.markers!])
          assert.equal(await storage.sessionStore.readMark(marker.key), marker.value, marker.key);
        const event = await storage.eventOutbox.get(asked.ifStored!.event!.id);
        assert.equal(event?.delivery.state, 'pending', 'recorded, its delivery queued');
      }));

    test('writes nothing when the webhook-id was delivered for another session', () =>
      withStorage(async (storage) => {
        const [first, second] = [pending(), pending()];
        for (const record of [first, second]) await storage.sessionStore.create(record);
        const webhookId = newId();
        assert.ok(!(await writerOf(storage).recordOutcome(write(first, success(), webhookId))).conflict);
        const reused = write(second, success(), webhookId);
        assert.deepEqual(await writerOf(storage).recordOutcome(reused), { conflict: true });
        assert.equal((await storage.sessionStore.get(second.sessionId))?.state, 'pending');
        assert.equal(await storage.sessionStore.readMark(reused.markers[0]!.key), undefined);
        assert.equal(await storage.eventOutbox.get(reused.ifStored!.event!.id), undefined);
      }));

    test('a second outcome is not stored, and writes none of what goes with a stored one', () =>
      withStorage(async (storage) => {
        const record = pending();
        await storage.sessionStore.create(record);
        const first = success();
        await writerOf(storage).recordOutcome(write(record, first));
        const later = write(record, { status: 'failure', code: 'X', message: 'later' });
        const result = await writerOf(storage).recordOutcome(later);
        assert.ok(!result.conflict && !result.stored);
        assert.deepEqual(result.record.outcome, first, 'the first outcome, as stored');
        assert.equal(await storage.eventOutbox.get(later.ifStored!.event!.id), undefined);
      }));
  });
}
