// Personal data at rest (issue 39 §5): after a link-and-save flow, what each backend holds (memory: the
// records as stored; SQLite: the bytes of the database and its WAL; Redis: every key and value) carries
// neither the consumer's name and e-mail nor the consent's address and user agent in the clear, and the
// merchant's server still gets them where it needs them (the bank step's request, the saved account's consent).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import {
  createLogger,
  createOutboxCodec,
  createStorage,
  type SavedAccount,
  type Storage,
} from '../../../proxy/index.ts';
import { linkSessionId } from '../../../proxy/link-sessions/link-sessions.ts';
import { CONSENT_VERSION } from '../../../proxy/words/consent.ts';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { EVENTS_SECRET, startMerchantEndpoint } from '../../helpers/merchant-endpoint.ts';
import { startProxyPair, TEST_MERCHANT_API_KEY } from '../../helpers/proxy-harness.ts';
import { redisSkipReason, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

const FIRST = 'Zenobia';
const LAST = 'Quillfeather';
const EMAIL = 'zenobia.quill@example.org';
const AGENT = 'PersonalDataProbe/7.3 (at rest)';
const PERSONAL = [FIRST, LAST, EMAIL, AGENT];

/** One link-and-save flow on `backend`; `dump` reads what the backend holds afterwards, as text. */
async function linkAndSave(
  backend: Storage,
  dump: (ids: { linkSession: string; sessionId: string }) => Promise<string>,
  proxy: Omit<NonNullable<Parameters<typeof startProxyPair>[0]>['proxy'], 'backend'> = {},
) {
  const pair = await startProxyPair({ proxy: { ...proxy, backend } });
  try {
    const { linkToken } = await pair.proxy.createLinkSession({
      merchantUserId: 'user-at-rest',
      merchantTransactionId: `order-at-rest-${backend.kind}`,
      amount: '12.34',
      currency: 'USD',
      consumer: { firstName: FIRST, lastName: LAST, email: EMAIL },
      allowSaving: true,
    });
    const started = await fetch(`${pair.baseUrl}/verifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: pair.origin, 'user-agent': AGENT },
      body: JSON.stringify({ linkToken, consent: CONSENT_VERSION }),
    });
    assert.equal(started.status, 201);
    const { sessionId, consumerUrl } = (await started.json()) as { sessionId: string; consumerUrl: string };
    // The provider was told who the consumer is: sealed at rest, opened for the bank step.
    assert.ok(
      JSON.stringify([...pair.provider.state.verifications.values()]).includes(EMAIL),
      'the bank step was started with the consumer',
    );
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const view = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { outcome: { linkRef: string } };
    const link = await fetch(`${pair.baseUrl}/links/${view.outcome.linkRef}`, {
      headers: { authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
    });
    const { savedAccount } = (await link.json()) as { savedAccount: SavedAccount };
    assert.equal(savedAccount.consent?.userAgent, AGENT, "the merchant's server reads the consent whole");
    const held = await dump({ linkSession: linkSessionId(linkToken), sessionId });
    assert.match(held, /sealedConsumer/, 'the dump holds the link session (it read the records)');
    assert.match(held, /sealedClient/, 'the dump holds the consent');
    for (const value of PERSONAL) assert.ok(!held.includes(value), `${value} is held in the clear`);
  } finally {
    await pair.close();
  }
}

describe('personal data at rest, every backend', () => {
  test('memory: the stored link session and session hold no name, e-mail, address or user agent', async () => {
    const backend = createStorage({ kind: 'memory' });
    try {
      await linkAndSave(backend, async ({ linkSession, sessionId }) =>
        JSON.stringify([await backend.linkSessions.get(linkSession), await backend.sessionStore.get(sessionId)]),
      );
    } finally {
      await backend.close();
    }
  });

  test('SQLite: the database file and its WAL hold none of them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'obv-at-rest-'));
    const backend = createStorage({ kind: 'sqlite', dataDir: dir, logger: createLogger('silent') });
    try {
      await linkAndSave(backend, async () =>
        readdirSync(dir)
          .map((file) => readFileSync(join(dir, file)).toString('latin1'))
          .join('\n'),
      );
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("SQLite with merchant events on: the outbox's link.succeeded (its consent's user agent) is sealed in the file too", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'obv-at-rest-events-'));
    const outboxCodec = createOutboxCodec([{ id: 'k1', key: randomBytes(32) }]);
    const backend = createStorage({ kind: 'sqlite', dataDir: dir, logger: createLogger('silent'), outboxCodec });
    const endpoint = await startMerchantEndpoint();
    try {
      await linkAndSave(
        backend,
        async () => {
          // The event was recorded (with the outcome's commit): the outbox lists it, opened, as the merchant reads it.
          const listed = await backend.eventOutbox.list({ limit: 10 }, Date.now());
          const succeeded = listed?.events.find(({ event }) => event.type === 'link.succeeded');
          assert.ok(succeeded, 'link.succeeded is in the outbox');
          assert.ok(succeeded.body.includes(AGENT) && succeeded.body.includes('user-at-rest'), 'opened whole');
          return readdirSync(dir)
            .map((file) => readFileSync(join(dir, file)).toString('latin1'))
            .join('\n');
        },
        { eventsUrl: endpoint.url, eventsSecrets: [EVENTS_SECRET] },
      );
    } finally {
      await backend.close();
      await endpoint.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a link session stored before the consumer was sealed (made before an upgrade) still starts', async () => {
    const backend = createStorage({ kind: 'memory' });
    const pair = await startProxyPair({ proxy: { backend } });
    try {
      const linkToken = `lt_${'L'.repeat(32)}`;
      const at = Date.now();
      await backend.linkSessions.create(
        linkSessionId(linkToken),
        {
          merchantUserId: 'user-legacy',
          merchantTransactionId: 'order-legacy',
          amount: '5.00',
          currency: 'USD',
          consumer: { firstName: FIRST, lastName: LAST, email: EMAIL },
          createdAt: at,
          expiresAt: at + 60_000,
        },
        120_000,
      );
      const started = await fetch(`${pair.baseUrl}/verifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: pair.origin },
        body: JSON.stringify({ linkToken }),
      });
      assert.equal(started.status, 201, await started.clone().text());
    } finally {
      await pair.close();
      await backend.close();
    }
  });

  const skip = redisSkipReason();
  let redis: RedisServer | undefined;
  after(async () => redis?.close());
  test('Redis: every key and value holds none of them', { skip }, async () => {
    redis = await startRedisServer();
    const backend = createStorage({
      kind: 'redis',
      redisUrl: redis.url,
      redisPrefix: 'obv:',
      logger: createLogger('silent'),
    });
    const raw = new Redis(redis.url);
    try {
      await linkAndSave(backend, async () => {
        const keys = await raw.keys('*');
        const values = await Promise.all(
          keys.map(async (key) => {
            const type = await raw.type(key);
            return type === 'hash'
              ? JSON.stringify(await raw.hgetall(key))
              : type === 'string'
                ? await raw.get(key)
                : type === 'zset'
                  ? JSON.stringify(await raw.zrange(key, 0, -1))
                  : '';
          }),
        );
        return [...keys, ...values].join('\n');
      });
    } finally {
      raw.disconnect();
      await backend.close();
    }
  });
});
