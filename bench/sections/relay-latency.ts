// 3. Relay latency: a signed notification in, the result out of the subscribed browser socket, while
// N idle subscribed sockets sit on the same server; beside a bare ws server relaying the same message.
// Samples alternate between the two servers so a noisy neighbour on the machine hits both alike.
import { SequentialClient } from '../lib/http-client.ts';
import type { BenchOptions } from '../lib/options.ts';
import { formatDeltaMs, formatMs, type SectionResult } from '../lib/report.ts';
import { ServerUnderTest, type PreparedSession } from '../lib/servers.ts';
import { IdleSocketPool } from '../lib/socket-pool.ts';
import { summarize, type LatencySummary } from '../lib/stats.ts';
import { subscribe, timeRelay, type RelayTiming } from '../lib/subscriber.ts';

const AIM_P99_MS = 2;

interface Side {
  server: ServerUnderTest;
  pool: IdleSocketPool;
  client: SequentialClient;
  sessions: PreparedSession[];
  /** Creation index of `sessions[0]`: the notification body names that session's order (`txn-{index}`). */
  firstIndex: number;
  timings: RelayTiming[];
}

async function prepareSide(kind: 'obv' | 'bare', idle: number, timed: number): Promise<Side> {
  const server = await ServerUnderTest.start(kind);
  const sessions = await server.prepareSessions(idle + timed);
  const pool = new IdleSocketPool(`relay-${kind}`);
  await pool.add(
    server.address,
    sessions.slice(0, idle).map((session) => session.sessionId),
    600_000,
  );
  return {
    server,
    pool,
    client: new SequentialClient(server.address.origin),
    sessions: sessions.slice(idle),
    firstIndex: idle,
    timings: [],
  };
}

function summarizeSide(side: Side): { sendToReceive: LatencySummary; resultBeforeAnswerShare: number } {
  return {
    sendToReceive: summarize(side.timings.map((timing) => timing.sendToReceive)),
    // "Accepted → received" is ≤ 0 whenever the result leaves before the 2xx: the table times from the send.
    resultBeforeAnswerShare: side.timings.filter((timing) => timing.resultBeforeAnswer).length / side.timings.length,
  };
}

async function sampleOnce(side: Side, index: number, record: boolean): Promise<void> {
  const session = side.sessions[index] as PreparedSession;
  const socket = await subscribe(side.server.address, session.sessionId);
  try {
    const timing = await timeRelay(
      socket,
      side.client,
      side.server.address,
      session,
      `msg_relay_${side.server.kind}_${index}`,
      side.firstIndex + index,
    );
    if (record) side.timings.push(timing);
  } finally {
    socket.terminate();
  }
}

export async function measureRelayLatency({ sizes }: BenchOptions): Promise<SectionResult> {
  const timed = sizes.warmup + sizes.relaySamples;
  const bareSide = await prepareSide('bare', sizes.idleSockets, timed);
  const obvSide = await prepareSide('obv', sizes.idleSockets, timed);
  const sides = [bareSide, obvSide];
  try {
    const deadline = Date.now() + sizes.loopTimeoutMs;
    for (let index = 0; index < timed && Date.now() < deadline; index++) {
      if (index === sizes.warmup) await Promise.all(sides.map((side) => side.server.profileStart()));
      // Alternate which server goes first, so neither always follows the other's socket close.
      const order = index % 2 === 0 ? sides : [obvSide, bareSide];
      for (const side of order) await sampleOnce(side, index, index >= sizes.warmup);
    }
    await Promise.all(sides.map((side) => side.server.profileStop(`relay-${side.server.kind}`)));
  } finally {
    for (const side of sides) {
      side.client.close();
      await side.pool.close();
      await side.server.close();
    }
  }
  const bare = summarizeSide(bareSide);
  const obv = summarizeSide(obvSide);
  const idle = `${sizes.idleSockets.toLocaleString('en-US')} idle sockets`;
  return {
    section: 'relay',
    rows: [
      {
        metric: `relay p50, notification → socket (${idle})`,
        value: formatMs(obv.sendToReceive.p50),
        baseline: `${formatMs(bare.sendToReceive.p50)} bare ws`,
        comparison: formatDeltaMs(obv.sendToReceive.p50 - bare.sendToReceive.p50),
        aim: '',
      },
      {
        metric: `relay p99, notification → socket (${idle})`,
        value: formatMs(obv.sendToReceive.p99),
        baseline: `${formatMs(bare.sendToReceive.p99)} bare ws`,
        comparison: formatDeltaMs(obv.sendToReceive.p99 - bare.sendToReceive.p99),
        aim: `< ${AIM_P99_MS} ms`,
        met: obv.sendToReceive.p99 < AIM_P99_MS,
      },
    ],
    data: { idleSockets: sizes.idleSockets, obv, bare, aimP99Ms: AIM_P99_MS },
  };
}
