// Redis keeps the outbox's events as hashes: events an earlier release stored in the clear (no user tag,
// no index by user) are sealed, tagged and indexed by a start of this one, list with the bodies they had,
// and are found when their user is forgotten.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { Redis } from 'ioredis';
import { createLogger, createOutboxCodec, createStorage } from '../../../proxy/index.ts';
import { randomEventId } from '../../../proxy/events/ids.ts';
import { buildEvent, type MerchantEvent } from '../../../proxy/storage/events.ts';
import { redisSkipReason, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';

const skip = redisSkipReason();
let redis: RedisServer | undefined;
after(async () => redis?.close());

test(
  'events stored in the clear by an earlier release are sealed at a start, listed as they were and forgotten',
  { skip },
  async () => {
    redis = await startRedisServer();
    const raw = new Redis(redis.url);
    const logger = createLogger('silent');
    const prefix = 'upgrade:';
    const event = buildEvent(
      randomEventId(),
      'link.succeeded',
      {
        merchantUserId: 'user-clear-9',
        linkRef: 'ref-9',
        accountLabel: 'Checking ••••1357',
        fiName: 'Bank',
        fiAccountType: 'CHECKING',
        savedAccount: {
          sealed: 'obv1.sealed-for-the-user',
          accountId: 'sa_9',
          accountLabel: 'Checking ••••1357',
          fiName: 'Bank',
          fiAccountType: 'CHECKING',
          linkedAt: new Date(1_000).toISOString(),
        },
      },
      1_000,
    ) as MerchantEvent;
    try {
      // What the earlier release left: the body in the clear, neither the `user` field nor the set by user.
      const earlier = createStorage({ kind: 'redis', redisUrl: redis.url, redisPrefix: prefix, logger });
      await earlier.eventOutbox.append(event, Date.now());
      await earlier.close();
      await raw.hdel(`${prefix}evt:${event.id}`, 'user');
      await raw.del(`${prefix}evt-user:user-clear-9`);
      assert.equal(await raw.hget(`${prefix}evt:${event.id}`, 'event'), JSON.stringify(event));

      const storage = createStorage({
        kind: 'redis',
        redisUrl: redis.url,
        redisPrefix: prefix,
        logger,
        outboxCodec: createOutboxCodec([{ id: 'k1', key: randomBytes(32) }]),
      });
      try {
        // forgetUser waits for the start's sealing pass, then finds the event through its user's set.
        assert.equal(await storage.eventOutbox.forgetUser('user-clear-9'), 1);
        const stored = await raw.hgetall(`${prefix}evt:${event.id}`);
        assert.match(stored.event!, /^obv1\./);
        const keys = await raw.keys(`${prefix}*`);
        const held = JSON.stringify([keys, stored]);
        assert.ok(!held.includes('user-clear-9') && !held.includes('1357'), held);
        const listed = await storage.eventOutbox.list({ limit: 10 }, Date.now());
        assert.equal(listed?.events[0]?.event.data.merchantUserId, 'user-clear-9');
        assert.equal(
          listed?.events[0]?.event.type === 'link.succeeded' && listed.events[0].event.data.savedAccount,
          undefined,
        );
      } finally {
        await storage.close();
      }
    } finally {
      raw.disconnect();
    }
  },
);
