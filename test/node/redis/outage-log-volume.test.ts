// A Redis outage the proxy expects must not flood the log: two instances under steady traffic (starts,
// reads, notifications, WebSocket subscriptions, readiness probes) while a real redis-server is stopped
// and started again. Each instance writes at most 10 lines at warn or above for the whole outage, none
// with a stack, and says when the store went down and when it came back, with what it refused meanwhile.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { DEFAULT_WEBHOOK_SECRET, startProvider, type RunningProvider } from '../../../sandbox/index.ts';
import { captureLogs, type LogCapture } from '../../helpers/log-capture.ts';
import { redisSkipReason, startRedisServer, type RedisServer } from '../../helpers/redis-server.ts';
import { postNotification, successPayload } from '../../helpers/webhooks.ts';
import { newLinkToken, postVerification, startInstance, startVerification, type ProxyInstance } from './cluster.ts';
import { eventually, randomId } from './support.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

const skip = redisSkipReason();

/** How long the outage lasts, and the traffic's pace during it (bounded: about 100 rounds). */
const OUTAGE_MS = 2_000;
const ROUND_MS = 20;
const MAX_LINES_PER_INSTANCE = 10;

/** Opens a socket and asks for `sessionId`; resolves when the socket ends or after a short wait. */
function subscribeOnce(instance: ProxyInstance, sessionId: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${instance.url.replace(/^http/, 'ws')}/obv/ws`, { origin: instance.url });
    const done = () => {
      clearTimeout(timer);
      socket.terminate();
      resolve();
    };
    const timer = setTimeout(done, 500);
    socket.on('open', () => socket.send(JSON.stringify({ type: 'subscribe', sessionId })));
    socket.on('close', done);
    socket.on('error', done);
  });
}

/** An instance with a session of its own, that session's notification URL and a shopper's link token. */
interface Traffic {
  instance: ProxyInstance;
  sessionId: string;
  notificationUrl: string;
  linkToken: string;
}

/** One round of what shoppers, the provider and a load balancer send to an instance. */
async function trafficRound({ instance, sessionId, notificationUrl, linkToken }: Traffic): Promise<void> {
  const drain = (response: Response) => response.body?.cancel();
  await Promise.all(
    [
      postVerification(instance, { 'idempotency-key': `outage-${randomId()}` }, linkToken).then(drain),
      lookupSession(`${instance.url}/obv`, sessionId).then(drain),
      fetch(`${instance.url}/obv/readyz`).then(drain),
      postNotification(notificationUrl, successPayload(), { secret: DEFAULT_WEBHOOK_SECRET }).then(drain),
      subscribeOnce(instance, sessionId),
    ].map((request) => Promise.resolve(request).catch(() => undefined)),
  );
}

const atWarnOrAbove = (logs: LogCapture) => logs.records().filter((record) => Number(record.level) >= 40);

describe('a Redis outage in the log', { skip }, () => {
  let redis: RedisServer;
  let provider: RunningProvider;
  const instances: (Traffic & { logs: LogCapture })[] = [];

  before(async () => {
    redis = await startRedisServer({ persistent: true });
    provider = await startProvider();
    for (let index = 0; index < 2; index++) {
      const logs = captureLogs('info');
      const instance = await startInstance({ provider, redisUrl: redis.url, logger: logs.logger, rateLimit: 0 });
      const { sessionId, consumerUrl } = await startVerification(instance);
      const verification = provider.state.verifications.get(new URL(consumerUrl).pathname.split('/').pop()!);
      assert.ok(verification?.notificationURL);
      // The shoppers' link token, made while Redis is up.
      instances.push({
        instance,
        logs,
        sessionId,
        notificationUrl: verification.notificationURL,
        linkToken: await newLinkToken(instance),
      });
    }
  });

  after(async () => {
    await Promise.all(instances.map(({ instance }) => instance.kill()));
    await provider?.close();
    await redis?.close();
  });

  it('takes at most 10 lines at warn or above per instance, without stacks, and reports the return with what was refused', async (t) => {
    const before = instances.map(({ logs }) => atWarnOrAbove(logs).length);
    await redis.stop('SIGKILL');
    const outageEnds = Date.now() + OUTAGE_MS;
    for (let round = 0; Date.now() < outageEnds && round < 200; round++) {
      await Promise.all(instances.map(trafficRound));
      await new Promise((resolve) => setTimeout(resolve, ROUND_MS));
    }
    await redis.start();
    // Back: every instance ready again, then a little more traffic that now succeeds.
    for (const { instance } of instances) {
      await eventually(
        async () => ((await fetch(`${instance.url}/obv/readyz`)).status === 200 ? true : undefined),
        20_000,
      );
    }
    for (const traffic of instances) await trafficRound(traffic);

    for (const [index, { logs }] of instances.entries()) {
      await eventually(() => (logs.find('session store is back').length > 0 ? true : undefined), 10_000).catch(() =>
        assert.fail(`instance ${index} never said the store was back:\n${logs.lines.slice(-20).join('\n')}`),
      );
      const lines = atWarnOrAbove(logs).slice(before[index]);
      t.diagnostic(
        `instance ${index}: ${lines.length} lines at warn or above; back: ${JSON.stringify(logs.find('session store is back')[0]?.refused)}`,
      );
      assert.ok(
        lines.length <= MAX_LINES_PER_INSTANCE,
        `instance ${index}: ${lines.length} lines at warn or above:\n${lines.map((line) => JSON.stringify(line)).join('\n')}`,
      );
      assert.deepEqual(
        lines.filter((line) => JSON.stringify(line).includes('"stack"')),
        [],
        'no stack for an outage the proxy expects',
      );
      assert.equal(logs.find('session store is unavailable').length, 1, 'the outage is logged once');
      const [back] = logs.find('session store is back');
      const refused = back?.refused as Record<string, number> | undefined;
      assert.ok(
        refused && Object.values(refused).reduce((sum, count) => sum + count, 0) > 0,
        `a count of what was refused: ${JSON.stringify(back)}`,
      );
    }
  });
});
