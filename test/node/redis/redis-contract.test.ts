// The Redis backend against the same SessionStore / ResultBus contract the in-memory backend passes
// (test/node/proxy/memory-backend.test.ts): routes and relay rely on both behaving identically.
import { after, describe } from 'node:test';
import { openRedisResultBus } from '../../../proxy/storage/redis/bus.ts';
import { openRedisSessionStore } from '../../../proxy/storage/redis/session-store.ts';
import { describeResultBusContract, describeSessionStoreContract } from '../../helpers/session-backend-contract.ts';
import { redisSkipReason, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';

const skip = redisSkipReason();

if (skip) {
  describe('Redis backend: SessionStore and ResultBus contracts', { skip }, () => undefined);
} else {
  // Started on first use: the contract suites build their stores inside the tests.
  let server: Promise<RedisServer> | undefined;
  const redisUrl = async (): Promise<string> => (await (server ??= startRedisServer())).url;

  describeSessionStoreContract('redis', async () => openRedisSessionStore({ url: await redisUrl() }));
  describeResultBusContract('redis', async () => openRedisResultBus({ url: await redisUrl() }));

  after(async () => {
    await (await server)?.close();
  });
}
