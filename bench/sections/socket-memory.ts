// 5. Memory per idle subscribed socket: the server alone in its process, its RSS and V8 heap read
// after a full GC before any socket and again at each step, beside a bare ws server.
import { socketsPerProcess } from '../lib/limits.ts';
import type { MemoryReading } from '../lib/memory.ts';
import type { BenchOptions } from '../lib/options.ts';
import { formatBytes, formatRatio, type Row, type SectionResult } from '../lib/report.ts';
import { ServerUnderTest, type ServerKind } from '../lib/servers.ts';
import { IdleSocketPool } from '../lib/socket-pool.ts';

const AIM_RATIO = 1.3;

interface PerSocket {
  sockets: number;
  rssPerSocket: number;
  heapPerSocket: number;
}

/** Opens sockets in steps up to each of `steps` and reads the server's memory per socket at each. */
async function measureSide(
  kind: ServerKind,
  steps: readonly number[],
): Promise<{ before: MemoryReading; steps: PerSocket[] }> {
  const server = await ServerUnderTest.start(kind);
  const pool = new IdleSocketPool(`memory-${kind}`);
  try {
    const sessions = await server.prepareSessions(Math.max(...steps));
    // Sessions exist before the first reading: what is measured is the socket and its subscription.
    const before = await server.memory();
    const results: PerSocket[] = [];
    for (const step of steps) {
      await pool.add(
        server.address,
        sessions.slice(pool.open, step).map((session) => session.sessionId),
        600_000,
      );
      const after = await server.memory();
      results.push({
        sockets: step,
        rssPerSocket: (after.rss - before.rss) / step,
        heapPerSocket: (after.heapUsed - before.heapUsed) / step,
      });
    }
    return { before, steps: results };
  } finally {
    await pool.close();
    await server.close();
  }
}

/**
 * The socket counts actually measured: the wanted ones, capped by what one server process may hold
 * under this machine's open-file limit (the figure then says how many it really was).
 */
export function reachableSteps(wanted: readonly number[], perProcess = socketsPerProcess()): number[] {
  return [...new Set(wanted.map((count) => Math.min(count, perProcess)))];
}

export async function measureSocketMemory({ sizes }: BenchOptions): Promise<SectionResult> {
  const steps = reachableSteps(sizes.memorySockets);
  const bare = await measureSide('bare', steps);
  const obv = await measureSide('obv', steps);
  const rows: Row[] = [];
  steps.forEach((sockets, index) => {
    const mine = obv.steps[index] as PerSocket;
    const floor = bare.steps[index] as PerSocket;
    const at = `${sockets.toLocaleString('en-US')} sockets`;
    const rssRatio = mine.rssPerSocket / floor.rssPerSocket;
    rows.push(
      {
        metric: `RSS per idle socket @ ${at}`,
        value: formatBytes(mine.rssPerSocket),
        baseline: `${formatBytes(floor.rssPerSocket)} bare ws`,
        comparison: formatRatio(rssRatio),
        aim: `≤ ${formatRatio(AIM_RATIO)}`,
        met: rssRatio <= AIM_RATIO,
      },
      {
        metric: `heap per idle socket @ ${at}`,
        value: formatBytes(mine.heapPerSocket),
        baseline: `${formatBytes(floor.heapPerSocket)} bare ws`,
        comparison: formatRatio(mine.heapPerSocket / floor.heapPerSocket),
        aim: `≤ ${formatRatio(AIM_RATIO)}`,
        met: mine.heapPerSocket / floor.heapPerSocket <= AIM_RATIO,
      },
    );
  });
  return {
    section: 'memory',
    rows,
    data: {
      wantedSockets: sizes.memorySockets,
      measuredSockets: steps,
      socketsPerProcess: socketsPerProcess(),
      obv,
      bare,
      aimRatio: AIM_RATIO,
    },
  };
}
