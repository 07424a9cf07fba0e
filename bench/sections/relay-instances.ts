// Relay across instances: three proxies share one Redis or one PostgreSQL; the browser's socket is on one
// instance and the provider's notification lands on the next, so the result crosses the shared bus (Redis
// pub/sub; PostgreSQL's NOTIFY, with its table read as the floor). Its baseline is the same notification
// sent to the socket's own instance, on the same storage, in the same run: samples alternate between the
// two paths, so load on the machine hits both alike. Redis and PostgreSQL run one after the other, each on
// a throw-away server, whatever `--storage` says (the comparison between them is the point); an engine not
// installed on the machine gets a row saying so instead of figures.
import { SequentialClient } from '../lib/http-client.ts';
import type { BenchOptions } from '../lib/options.ts';
import { formatDeltaMs, formatMs, type Row, type SectionResult } from '../lib/report.ts';
import { ServerUnderTest, type PreparedSession } from '../lib/servers.ts';
import { summarize, type LatencySummary } from '../lib/stats.ts';
import { openStorage } from '../lib/storage.ts';
import { postgresSkipReason } from '../../test/helpers/postgres-server.ts';
import { redisSkipReason } from '../../test/helpers/redis-server.ts';
import { subscribe, timeRelay } from '../lib/subscriber.ts';

const INSTANCES = 3;
/** Enough for a p99 at full size; each sample opens a socket and commits a session's outcome. */
const MAX_SAMPLES = 1_000;
const ENGINES = ['redis', 'postgres'] as const;

interface EngineFigures {
  across: LatencySummary;
  same: LatencySummary;
}

async function measureEngine(engine: (typeof ENGINES)[number], options: BenchOptions): Promise<EngineFigures> {
  const { sizes } = options;
  const samples = Math.min(sizes.relaySamples, MAX_SAMPLES);
  const timed = sizes.warmup + samples;
  const storage = await openStorage(engine);
  const servers: ServerUnderTest[] = [];
  const clients: SequentialClient[] = [];
  const across: number[] = [];
  const same: number[] = [];
  try {
    // One after the other: the first applies the schema (PostgreSQL's migrations take an advisory lock anyway).
    for (let index = 0; index < INSTANCES; index++) servers.push(await ServerUnderTest.start('obv', storage.env));
    for (const server of servers) clients.push(new SequentialClient(server.address.origin));
    // Two sessions per sample (one per path), written once into the shared store: every instance knows them.
    const sessions = await servers[0]!.prepareSessions(2 * timed);
    const deadline = Date.now() + sizes.loopTimeoutMs;
    for (let index = 0; index < timed && Date.now() < deadline; index++) {
      const home = index % INSTANCES;
      const paths = [
        { list: across, notifyOn: (home + 1) % INSTANCES, session: sessions[2 * index]! },
        { list: same, notifyOn: home, session: sessions[2 * index + 1]! },
      ];
      // Alternate which path goes first, so neither always follows the other's socket close.
      if (index % 2 === 1) paths.reverse();
      for (const path of paths) {
        const duration = await sampleOnce(servers, clients, home, path.notifyOn, path.session, engine, index);
        if (index >= sizes.warmup) path.list.push(duration);
      }
    }
  } finally {
    for (const client of clients) client.close();
    for (const server of servers) await server.close();
    await storage.close();
  }
  return { across: summarize(across), same: summarize(same) };
}

async function sampleOnce(
  servers: readonly ServerUnderTest[],
  clients: readonly SequentialClient[],
  home: number,
  notifyOn: number,
  session: PreparedSession,
  engine: string,
  index: number,
): Promise<number> {
  const socket = await subscribe(servers[home]!.address, session.sessionId);
  try {
    const webhookId = `msg_relay_${engine}_${notifyOn === home ? 'same' : 'across'}_${index}`;
    // The order index names the prepared session's order (`txn-{n}`), as the notification body must.
    const order = 2 * index + (notifyOn === home ? 1 : 0);
    const timing = await timeRelay(socket, clients[notifyOn]!, servers[notifyOn]!.address, session, webhookId, order);
    return timing.sendToReceive;
  } finally {
    socket.terminate();
  }
}

export async function measureRelayAcrossInstances(options: BenchOptions): Promise<SectionResult> {
  const figures: Partial<Record<(typeof ENGINES)[number], EngineFigures>> = {};
  const rows: Row[] = [];
  for (const engine of ENGINES) {
    const missing = engine === 'redis' ? redisSkipReason() : postgresSkipReason();
    if (missing !== false) {
      rows.push({
        metric: `[${engine}] relay across ${INSTANCES} instances`,
        value: 'not run',
        baseline: missing,
        comparison: '',
        aim: '',
      });
      continue;
    }
    const { across, same } = (figures[engine] = await measureEngine(engine, options));
    for (const quantile of ['p50', 'p99'] as const) {
      rows.push({
        metric: `[${engine}] relay ${quantile} across ${INSTANCES} instances, notification → socket on another`,
        value: formatMs(across[quantile]),
        baseline: `${formatMs(same[quantile])} socket on the notified instance`,
        comparison: formatDeltaMs(across[quantile] - same[quantile]),
        aim: '',
      });
    }
  }
  return { section: 'relay-instances', rows, data: { instances: INSTANCES, ...figures } };
}
