// Credentials at rest: after link-and-pay flows on Redis, a dump of every key and every value holds no
// accountToken (sealed) and no link token (stored by hash); and the sealed records still pay.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { createLogger, createStorage, type Storage } from '../../../proxy/index.ts';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { startProxyPair, TEST_MERCHANT_API_KEY, type ProxyPair } from '../../helpers/proxy-harness.ts';
import { redisSkipReason, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';
import { inspector } from './support.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

const skip = redisSkipReason();
const AUTH = `Bearer ${TEST_MERCHANT_API_KEY}`;

/** Every key in Redis with every value it holds, as text, whatever the key's type. */
async function dump(raw: Redis): Promise<string> {
  const parts: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await raw.scan(cursor, 'COUNT', 500);
    cursor = next;
    for (const key of keys) {
      const type = await raw.type(key);
      const value =
        type === 'string'
          ? await raw.get(key)
          : type === 'hash'
            ? JSON.stringify(await raw.hgetall(key))
            : type === 'set'
              ? JSON.stringify(await raw.smembers(key))
              : type === 'zset'
                ? JSON.stringify(await raw.zrange(key, 0, -1, 'WITHSCORES'))
                : type === 'list'
                  ? JSON.stringify(await raw.lrange(key, 0, -1))
                  : type === 'stream'
                    ? JSON.stringify(await raw.xrange(key, '-', '+'))
                    : `(${type})`;
      parts.push(`${key} = ${value}`);
    }
  } while (cursor !== '0');
  return parts.join('\n');
}

describe('credentials at rest on Redis', { skip }, () => {
  let redis: RedisServer;
  let backend: Storage;
  let pair: ProxyPair;
  let raw: Redis;

  before(async () => {
    redis = await startRedisServer();
    backend = createStorage({
      kind: 'redis',
      redisUrl: redis.url,
      redisPrefix: 'obv:',
      logger: createLogger('silent'),
    });
    pair = await startProxyPair({ proxy: { backend } });
    raw = inspector(redis.url);
  });
  after(async () => {
    raw?.disconnect();
    await pair?.close();
    await backend?.close();
    await redis?.close();
  });

  it('a scan of every key and value after link-and-pay flows finds no accountToken and no link token', async () => {
    const linkTokens: string[] = [];
    for (let order = 0; order < 3; order += 1) {
      const purchase = {
        merchantUserId: `user-${order}`,
        merchantTransactionId: `order-at-rest-${order}`,
        amount: '12.34',
        currency: 'USD',
        consumer: { firstName: 'Ana', lastName: 'López', email: 'ana@example.com' },
      };
      const { linkToken } = await pair.proxy.createLinkSession(purchase);
      linkTokens.push(linkToken);
      const started = await fetch(`${pair.baseUrl}/verifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: pair.origin },
        body: JSON.stringify({ linkToken }),
      });
      const { sessionId, consumerUrl } = (await started.json()) as { sessionId: string; consumerUrl: string };
      await completeConsumerStep(consumerUrl, 'good');
      await pair.provider.notificationsSettled();
      const view = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { outcome: { linkRef: string } };
      const paid = await fetch(`${pair.baseUrl}/transactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: AUTH, 'idempotency-key': `pay-${order}` },
        body: JSON.stringify({
          linkRef: view.outcome.linkRef,
          merchantUserId: purchase.merchantUserId,
          merchantTransactionId: purchase.merchantTransactionId,
          amount: '12.34',
          currency: 'USD',
        }),
      });
      assert.equal(paid.status, 201, 'the sealed token still pays');
    }
    const accountTokens = [...pair.provider.state.accounts.keys()];
    assert.equal(accountTokens.length, 3);
    const everything = await dump(raw);
    assert.match(everything, /sealedAccountToken/, 'the dump holds the sessions (the scan read them)');
    for (const token of [...accountTokens, ...linkTokens]) {
      assert.ok(!everything.includes(token), `${token.slice(0, 6)}… appears in Redis`);
    }
  });
});
