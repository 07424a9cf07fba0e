// Merchant events sealed at rest (issue 39 §5), as a reusable node:test suite every backend that keeps
// data at rest runs (test/node/storage/backends.test.ts: SQLite, PostgreSQL, Redis): what the backend
// itself holds (the file's bytes, the table's rows, every Redis key and value) names no merchant user, no
// consent address or user agent and no account label in the clear; a rotation (a new first sealing key)
// still lists, delivers and forgets the events sealed before it; a body copied onto another event does
// not open; and the merchant still reads the same event and the same body.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { newId } from '../../proxy/common/ids.ts';
import type { SealingKey } from '../../proxy/config/sealing-keys.ts';
import { randomEventId } from '../../proxy/events/ids.ts';
import { createOutboxCodec } from '../../proxy/sealing/outbox-codec.ts';
import { buildEvent, type MerchantEvent } from '../../proxy/storage/events.ts';
import type { EventOutbox, OutboxCodec } from '../../proxy/storage/outbox.ts';

/** One place of a backend (a data directory, a schema, a key prefix) its outboxes are opened on. */
export interface SealedOutboxPlace {
  /** An outbox on this place with `codec`; what an earlier one stored is there. Closing it closes its storage. */
  open(codec: OutboxCodec): Promise<EventOutbox>;
  /** Everything the place holds, as text: read from the backend itself, not through the outbox. */
  raw(): Promise<string>;
  /** Copies the stored body of the event `from` onto the event `to`, behind the outbox's back. */
  copyBody(from: string, to: string): Promise<void>;
  close(): Promise<void>;
}

export const sealingKey = (id: string): SealingKey => ({ id, key: randomBytes(32) });

const USER = `user-at-rest-${newId()}`;
const IP = '198.51.100.77';
const AGENT = 'OutboxProbe/9.1 (sealed)';
const LABEL = 'Savings ••••8642';

function linked(merchantUserId: string): MerchantEvent {
  return buildEvent(
    randomEventId(),
    'link.succeeded',
    {
      merchantUserId,
      merchantTransactionId: `order-${newId()}`,
      linkRef: newId(),
      accountLabel: LABEL,
      fiName: 'Bank',
      fiAccountType: 'SAVINGS',
      savedAccount: {
        sealed: 'obv1.sealed-for-the-user',
        accountId: `sa_${newId()}`,
        accountLabel: LABEL,
        fiName: 'Bank',
        fiAccountType: 'SAVINGS',
        linkedAt: new Date().toISOString(),
        consent: {
          version: 'v1',
          lang: 'en',
          checkbox: 'Save it',
          text: 'words',
          acceptedAt: new Date().toISOString(),
          ip: IP,
          userAgent: AGENT,
        },
      },
    },
    Date.now(),
  ) as MerchantEvent;
}

/** `makePlace` gets a fresh, empty place per test. */
export function describeSealedOutboxContract(name: string, makePlace: () => Promise<SealedOutboxPlace>): void {
  describe(`${name}: merchant events sealed at rest`, () => {
    test('what the backend holds names no user, address, user agent or account label; the merchant reads the same event and body', async () => {
      const place = await makePlace();
      const outbox = await place.open(createOutboxCodec([sealingKey('k1')]));
      try {
        const event = linked(USER);
        await outbox.append(event, 1_000);
        const stored = await outbox.get(event.id);
        assert.deepEqual(stored?.event, event);
        assert.equal(stored?.body, JSON.stringify(event), 'the body signed and sent is the event as JSON');
        assert.deepEqual(
          (await outbox.list({ limit: 10 }, 1_000))?.events.map((e) => e.body),
          [JSON.stringify(event)],
        );
        const raw = await place.raw();
        assert.ok(raw.includes(event.id), 'the dump holds the event (it read the backend)');
        for (const value of [USER, IP, AGENT, LABEL]) assert.ok(!raw.includes(value), `${value} is held in the clear`);
      } finally {
        await outbox.close();
        await place.close();
      }
    });

    test('after a rotation (a new first key) the events sealed before are listed, delivered and forgotten', async () => {
      const place = await makePlace();
      const old = sealingKey('k-old');
      const before = linked(USER);
      let outbox = await place.open(createOutboxCodec([old]));
      try {
        await outbox.append(before, 1_000);
        await outbox.close();
        outbox = await place.open(createOutboxCodec([sealingKey('k-new'), old]));
        const after = linked(USER);
        await outbox.append(after, 2_000);
        assert.deepEqual(
          (await outbox.list({ limit: 10 }, 2_000))?.events.map((e) => e.event),
          [before, after],
        );
        const due = await outbox.claimDue(2_000, 60_000, 10);
        assert.deepEqual(due.map((job) => job.kind === 'deliver' && job.eventId).sort(), [before.id, after.id].sort());
        assert.equal((await outbox.acknowledge(before.id, 2_500))?.body, JSON.stringify(before));
        assert.equal((await outbox.redeliver(before.id, 3_000))?.delivery.state, 'pending');
        assert.equal(await outbox.forgetUser(USER), 2, 'both keys\u2019 events are found');
        for (const id of [before.id, after.id]) {
          const kept = await outbox.get(id);
          assert.equal(kept?.event.type === 'link.succeeded' && kept.event.data.savedAccount, undefined);
          assert.equal(kept?.event.data.merchantUserId, USER);
        }
        assert.equal(await outbox.forgetUser(USER), 0, 'a second time finds nothing left to erase');
        const raw = await place.raw();
        for (const value of [USER, IP, AGENT, LABEL]) assert.ok(!raw.includes(value), `${value} is held in the clear`);
      } finally {
        await outbox.close();
        await place.close();
      }
    });

    test('a body sealed for one event does not open as another', async () => {
      const place = await makePlace();
      const outbox = await place.open(createOutboxCodec([sealingKey('k1')]));
      try {
        const a = linked(USER);
        const b = linked(`other-${newId()}`);
        await outbox.append(a, 1_000);
        await outbox.append(b, 1_000);
        await place.copyBody(a.id, b.id);
        await assert.rejects(outbox.get(b.id), /sealed for another context|altered/);
        assert.deepEqual((await outbox.get(a.id))?.event, a);
      } finally {
        await outbox.close();
        await place.close();
      }
    });
  });
}
