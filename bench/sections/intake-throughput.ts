// 4. Notification intake throughput: signed notifications for distinct sessions (each with its own
// webhook-id, so de-duplication never short-circuits), driven by autocannon; beside a bare node:http
// server doing the same Standard Webhooks check, de-dup, store and publish. Rounds alternate between
// the two servers so a noisy neighbour on the machine hits both alike.
import autocannon from 'autocannon';
import type { BenchOptions } from '../lib/options.ts';
import { signedHeaders, successNotification } from '../lib/notifications.ts';
import { formatRate, formatRatio, type SectionResult } from '../lib/report.ts';
import { ServerUnderTest, type PreparedSession } from '../lib/servers.ts';
import { nowMs } from '../lib/stats.ts';
import type { BenchStorage } from '../lib/storage.ts';

const AIM_RATIO = 0.5;
const ROUND_TIMEOUT_MS = 120_000;

export interface Side {
  server: ServerUnderTest;
  sessions: PreparedSession[];
  /** Next unused session. */
  cursor: number;
  ok: number;
  failed: number;
  ms: number;
  /** CPU the server used while measured: near `ms` means the server, not the load generator, was the limit. */
  serverCpuMs: number;
  /** SQLite: the WAL fsyncs and the acknowledgements that waited for one while measured (storage/sqlite/wal-sync.ts). */
  fsyncs: number;
  acknowledgements: number;
}

/** Sends `amount` notifications, one per unused session, and adds the counts and time to `side`. */
export async function load(side: Side, amount: number, connections: number, record: boolean): Promise<void> {
  const cpuBefore = await side.server.cpuTime();
  const syncBefore = side.server.kind === 'obv' ? await side.server.syncStats() : null;
  await send(side, amount, connections, record);
  if (!record) return;
  side.serverCpuMs += (await side.server.cpuTime()) - cpuBefore;
  const syncAfter = syncBefore && (await side.server.syncStats());
  if (syncBefore && syncAfter) {
    side.fsyncs += syncAfter.fsyncs - syncBefore.fsyncs;
    side.acknowledgements += syncAfter.acknowledgements - syncBefore.acknowledgements;
  }
}

function send(side: Side, amount: number, connections: number, record: boolean): Promise<void> {
  const { address } = side.server;
  const first = side.cursor;
  side.cursor += amount;
  let next = first;
  return new Promise((resolve, reject) => {
    // autocannon reports on whole-second ticks; the run's own span is first request to last response.
    const started = nowMs();
    let lastResponse = started;
    const instance = autocannon(
      {
        url: address.origin,
        connections,
        amount,
        timeout: 10,
        requests: [
          {
            method: 'POST',
            setupRequest: (request) => {
              // autocannon may ask for a few more than `amount` before it stops; those reuse the last session.
              const index = Math.min(next++, side.sessions.length - 1);
              const body = successNotification(index);
              const session = side.sessions[index] as PreparedSession;
              return {
                ...request,
                path: `${address.intakePrefix}${session.ref}`,
                body,
                headers: signedHeaders(`msg_intake_${index}`, body),
              };
            },
            onResponse: () => {
              lastResponse = nowMs();
            },
          },
        ],
      },
      (error, result) => {
        clearTimeout(timer);
        if (error) return reject(error);
        if (record) {
          side.ms += lastResponse - started;
          side.ok += result['2xx'];
          side.failed += result.non2xx + result.errors + result.timeouts;
        }
        resolve();
      },
    );
    const timer = setTimeout(() => instance.stop(), ROUND_TIMEOUT_MS);
  });
}

export async function prepareSide(
  kind: 'obv' | 'bare',
  count: number,
  env: Record<string, string> = {},
): Promise<Side> {
  const server = await ServerUnderTest.start(kind, env);
  return {
    server,
    sessions: await server.prepareSessions(count),
    cursor: 0,
    ok: 0,
    failed: 0,
    ms: 0,
    serverCpuMs: 0,
    fsyncs: 0,
    acknowledgements: 0,
  };
}

export async function measureIntakeThroughput({ sizes }: BenchOptions, storage: BenchStorage): Promise<SectionResult> {
  const warmup = Math.max(sizes.warmup, Math.round(sizes.intakeRequests / 10));
  const perRound = Math.ceil(sizes.intakeRequests / sizes.intakeRounds);
  const count = warmup + perRound * sizes.intakeRounds;
  const bare = await prepareSide('bare', count);
  // The sessions are written straight into the proxy's store (obv-server.ts says which store that is).
  const obv = await prepareSide('obv', count, { ...storage.env, BENCH_PREPARES_SESSIONS: '1' });
  let store = '';
  try {
    store = (await obv.server.storage()).store;
    for (const side of [bare, obv]) await load(side, warmup, sizes.intakeConnections, false);
    await Promise.all([bare.server.profileStart(), obv.server.profileStart()]);
    for (let round = 0; round < sizes.intakeRounds; round++) {
      for (const side of round % 2 === 0 ? [bare, obv] : [obv, bare])
        await load(side, perRound, sizes.intakeConnections, true);
    }
    await Promise.all([bare.server.profileStop('intake-bare'), obv.server.profileStop('intake-obv')]);
  } finally {
    await bare.server.close();
    await obv.server.close();
  }
  if (obv.failed > 0 || bare.failed > 0) {
    throw new Error(
      `notifications failed: obv-link ${obv.failed}, bare ${bare.failed} (of ${perRound * sizes.intakeRounds} each)`,
    );
  }
  const rate = (side: Side): number => side.ok / (side.ms / 1000);
  const cpuPerRequestUs = (side: Side): number => (1000 * side.serverCpuMs) / side.ok;
  const ratio = rate(obv) / rate(bare);
  // On SQLite each notification's acknowledgements (its outcome, its event) wait for an fsync of the WAL,
  // one fsync serving every acknowledgement that arrived while the one before it ran (group commit).
  const durability =
    obv.fsyncs > 0
      ? [
          {
            metric: 'WAL fsyncs under this load (group commit)',
            value: `${Math.round(obv.fsyncs / (obv.ms / 1000))} fsync/s`,
            baseline: `${formatRate(rate(obv))} notifications`,
            comparison: `${(obv.fsyncs / obv.ok).toFixed(2)} per notification; ${(obv.acknowledgements / obv.fsyncs).toFixed(1)} acknowledgements per fsync`,
            aim: '',
          },
        ]
      : [];
  return {
    section: 'intake',
    rows: [
      {
        metric: `notification intake (${sizes.intakeConnections} connections)`,
        value: formatRate(rate(obv)),
        baseline: `${formatRate(rate(bare))} bare node:http`,
        comparison: formatRatio(ratio),
        aim: `≥ ${formatRatio(AIM_RATIO)}`,
        met: ratio >= AIM_RATIO,
      },
      {
        // Independent of the load generator: what one notification costs the server's single thread.
        metric: 'server CPU per notification',
        value: `${Math.round(cpuPerRequestUs(obv))} µs`,
        baseline: `${Math.round(cpuPerRequestUs(bare))} µs bare node:http`,
        comparison: formatRatio(cpuPerRequestUs(obv) / cpuPerRequestUs(bare)),
        aim: '',
      },
      ...durability,
    ],
    data: {
      store,
      connections: sizes.intakeConnections,
      requestsPerSide: obv.ok,
      obv: {
        requestsPerSecond: rate(obv),
        ok: obv.ok,
        ms: obv.ms,
        serverCpuShare: obv.serverCpuMs / obv.ms,
        cpuPerRequestUs: cpuPerRequestUs(obv),
        fsyncs: obv.fsyncs,
        acknowledgements: obv.acknowledgements,
      },
      bare: {
        requestsPerSecond: rate(bare),
        ok: bare.ok,
        ms: bare.ms,
        serverCpuShare: bare.serverCpuMs / bare.ms,
        cpuPerRequestUs: cpuPerRequestUs(bare),
      },
      ratio,
      aimRatio: AIM_RATIO,
    },
  };
}
