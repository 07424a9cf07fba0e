// Growth with the load (issue 40 §4): notification intake at 1, 10 and 100 concurrent connections on the
// default storage (SQLite, whose acknowledgements share fsyncs: group commit), beside the bare node:http
// server doing the same check, de-dup, store and publish. Per step: the rate, the server's CPU per
// notification, and the fsyncs per notification; rounds alternate between the two servers. Part of the
// growth section (`--only growth`): how cost grows with concurrency, as the file's figures show it with size.
import type { BenchOptions } from '../lib/options.ts';
import { formatRate, formatRatio, type Row } from '../lib/report.ts';
import { openStorage } from '../lib/storage.ts';
import { load, prepareSide, type Side } from './intake-throughput.ts';

export interface ConcurrencyStep {
  connections: number;
  obv: { requestsPerSecond: number; cpuPerRequestUs: number; fsyncsPerRequest: number };
  bare: { requestsPerSecond: number; cpuPerRequestUs: number };
}

function reset(side: Side): void {
  Object.assign(side, { ok: 0, failed: 0, ms: 0, serverCpuMs: 0, fsyncs: 0, acknowledgements: 0 });
}

export async function measureIntakeConcurrency({
  sizes,
}: BenchOptions): Promise<{ rows: Row[]; steps: ConcurrencyStep[] }> {
  const storage = await openStorage('sqlite');
  const perStep = sizes.growthConcurrencyRequests;
  const count =
    sizes.warmup +
    sizes.growthConcurrency.reduce((sum, connections) => sum + 2 * Math.max(connections, Math.ceil(perStep / 2)), 0) +
    100;
  const steps: ConcurrencyStep[] = [];
  let bare: Side | undefined;
  let obv: Side | undefined;
  try {
    bare = await prepareSide('bare', count);
    obv = await prepareSide('obv', count, { ...storage.env, BENCH_PREPARES_SESSIONS: '1' });
    for (const side of [bare, obv]) await load(side, sizes.warmup, 10, false);
    for (const [index, connections] of sizes.growthConcurrency.entries()) {
      for (const side of [bare, obv]) reset(side);
      // Half of each step per server, in two rounds that change order (autocannon needs a request per connection).
      const amount = Math.max(connections, Math.ceil(perStep / 2));
      for (const round of [0, 1]) {
        for (const side of (index + round) % 2 === 0 ? [bare, obv] : [obv, bare])
          await load(side, amount, connections, true);
      }
      if (obv.failed > 0 || bare.failed > 0)
        throw new Error(
          `notifications failed at ${connections} connections: obv-link ${obv.failed}, bare ${bare.failed}`,
        );
      const rate = (side: Side): number => side.ok / (side.ms / 1000);
      const cpu = (side: Side): number => (1000 * side.serverCpuMs) / side.ok;
      steps.push({
        connections,
        obv: { requestsPerSecond: rate(obv), cpuPerRequestUs: cpu(obv), fsyncsPerRequest: obv.fsyncs / obv.ok },
        bare: { requestsPerSecond: rate(bare), cpuPerRequestUs: cpu(bare) },
      });
    }
  } finally {
    await bare?.server.close();
    await obv?.server.close();
    await storage.close();
  }
  const rows = steps.map((step): Row => ({
    metric: `[sqlite] notification intake at ${step.connections} connection${step.connections === 1 ? '' : 's'}`,
    value: `${formatRate(step.obv.requestsPerSecond)}, ${Math.round(step.obv.cpuPerRequestUs)} µs CPU each`,
    baseline: `${formatRate(step.bare.requestsPerSecond)}, ${Math.round(step.bare.cpuPerRequestUs)} µs bare node:http`,
    comparison: `${formatRatio(step.obv.requestsPerSecond / step.bare.requestsPerSecond)}; ${step.obv.fsyncsPerRequest.toFixed(2)} fsyncs per notification`,
    aim: '',
  }));
  return { rows, steps };
}
