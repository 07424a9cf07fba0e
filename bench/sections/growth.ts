// Growth: the SQLite file of a shop that has taken 20,000 and 200,000 checkouts. A child process
// (children/growth-proxy.ts) fills a fresh data directory through the storage layer — link sessions,
// sessions with their claims and markers, outcomes, payments, two delivered events per checkout — then
// the proxy runs on that file while this process times GET /events pages over HTTP, and last the file is
// pruned as the proxy's sweep and the outbox's trim prune it once the records are past their retention
// (eight days later: everything but the payments, kept 30 days). Figures: the file's size before and
// after, the proxy's start on it, the page times, and the longest the proxy's event loop was held by a
// clean-up step or while serving pages, beside how much of a step was CPU and the machine's own worst
// stall meanwhile (children/wake-probe.ts). Aim: no block longer than 50 ms, at every size. Then the
// growth with the load: notification intake at 1, 10 and 100 connections (intake-concurrency.ts).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATABASE_FILE } from '../../proxy/storage/sqlite/database.ts';
import { SequentialClient, expectStatus } from '../lib/http-client.ts';
import { BENCH_MERCHANT_API_KEY } from '../lib/obv-proxy-options.ts';
import type { BenchOptions } from '../lib/options.ts';
import { formatDeltaMs, formatMs, type Row, type SectionResult } from '../lib/report.ts';
import { BenchChild } from '../lib/rpc.ts';
import { nowMs, round, summarize, type LatencySummary } from '../lib/stats.ts';
import { measureIntakeConcurrency } from './intake-concurrency.ts';

/** The longest any request or clean-up step may hold the proxy's event loop. */
export const AIM_BLOCK_MS = 50;
/** Events per GET /events page timed (the merchant's catch-up page size). */
const PAGE_LIMIT = 100;
const DAY_MS = 24 * 3_600_000;
/** When the file is pruned: past the events' retention (7 days) after the last checkout, within the payments' (30). */
const PRUNE_AFTER_MS = 8 * DAY_MS;
/** The two lists a merchant pages through: every event, and those not delivered (none here: the index must skip them all). */
const FILTERS = ['', '&delivery=undelivered'] as const;

interface Filled {
  filled: number;
  fillMs: number;
  endAt: number;
  eventIds: string[];
}

interface Pruned {
  openMs: number;
  ms: number;
  deleted: number;
  vacuumedPages: number;
  checkpointed: boolean;
  steps: number;
  longestStepMs: number;
  /** What that step was: `delete <table>`, `vacuum`. */
  longestStep: string;
  /** The most CPU (the proxy's main thread) any step used: the rest of a step's time was waiting. */
  longestStepCpuMs: number;
  /** Checkpoints run in their worker thread (not event-loop steps), and the longest of them there. */
  checkpoints: number;
  longestCheckpointMs: number;
  loopDelayMaxMs: number;
}

/** What one size came to (results.json keeps it whole). */
export interface GrowthFigures {
  checkouts: number;
  fillSeconds: number;
  bytesBefore: number;
  bytesAfter: number;
  startMs: number;
  emptyStartMs: number;
  pages: { all: LatencySummary; undelivered: LatencySummary };
  servingLoopDelayMaxMs: number;
  prune: Pruned;
  /**
   * The machine's worst stall while pages were served and while pruning (children/wake-probe.ts: a process
   * that only sleeps 1 ms, held back as long): the part of a block no code of ours causes.
   */
  machineStallMs: { serving: number; pruning: number };
}

/** The database file and its WAL, in bytes (the WAL is gone once the file is closed). */
export function dataDirBytes(dataDir: string): number {
  let bytes = 0;
  for (const suffix of ['', '-wal']) {
    try {
      bytes += statSync(join(dataDir, `${DATABASE_FILE}${suffix}`)).size;
    } catch {
      // No WAL: nothing to add.
    }
  }
  return bytes;
}

const megabytes = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MB`;
const pair = (summary: LatencySummary): string => `${formatMs(summary.p50)} / ${formatMs(summary.p99)}`;

/** Times `count` GET /events pages per filter, each after a random retained event. */
async function timePages(
  origin: string,
  eventIds: readonly string[],
  count: number,
  deadline: number,
): Promise<GrowthFigures['pages']> {
  const client = new SequentialClient(origin);
  const samples: Record<'all' | 'undelivered', number[]> = { all: [], undelivered: [] };
  const headers = { authorization: `Bearer ${BENCH_MERCHANT_API_KEY}` };
  try {
    // Untimed pages first (a tenth), so compilation stays out of the figures.
    for (let index = -Math.ceil(count / 10); index < count && Date.now() < deadline; index++) {
      for (const filter of FILTERS) {
        // Every tenth page from the list's head (no `after`), the others after a random sampled event.
        const after = index % 10 === 0 ? '' : `&after=${eventIds[Math.floor(Math.random() * eventIds.length)]!}`;
        const started = nowMs();
        const response = await client.request(
          'GET',
          `/events?limit=${PAGE_LIMIT}${after}${filter}`,
          undefined,
          headers,
        );
        const ms = nowMs() - started;
        expectStatus(response, 200, 'GET /events');
        if (index >= 0) samples[filter === '' ? 'all' : 'undelivered'].push(ms);
      }
    }
  } finally {
    client.close();
  }
  return { all: summarize(samples.all), undelivered: summarize(samples.undelivered) };
}

const wallClock = (): number => performance.timeOrigin + performance.now();

/** Fills, serves and prunes a file of `checkouts` checkouts in `child`, `wake` noting the machine's stalls. */
async function measureSize(
  child: BenchChild,
  wake: BenchChild,
  checkouts: number,
  { growthPages: pages, loopTimeoutMs, growthFillTimeoutMs }: BenchOptions['sizes'],
): Promise<GrowthFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'obv-bench-growth-'));
  const emptyDir = mkdtempSync(join(tmpdir(), 'obv-bench-growth-empty-'));
  const warmupDir = mkdtempSync(join(tmpdir(), 'obv-bench-growth-warmup-'));
  try {
    const startAt = Date.now() - checkouts * 1_000 - DAY_MS;
    const fill = await child.call<Filled>(
      'fill',
      { dataDir, checkouts, startAt, timeLimitMs: growthFillTimeoutMs },
      growthFillTimeoutMs + 120_000,
    );
    if (fill.filled === 0 || fill.eventIds.length === 0)
      throw new Error(`growth: the fill made no checkout in ${growthFillTimeoutMs} ms`);
    const bytesBefore = dataDirBytes(dataDir);

    // The start on a new directory first, the baseline of the start on the full file (the first start
    // of the process loads and compiles code: it warms up on another new directory, untimed).
    await child.call('start', { dataDir: warmupDir, now: fill.endAt });
    await child.call('stop');
    const empty = await child.call<{ startMs: number }>('start', { dataDir: emptyDir, now: fill.endAt });
    await child.call('stop');
    const started = await child.call<{ origin: string; startMs: number }>('start', { dataDir, now: fill.endAt });
    let timed: GrowthFigures['pages'];
    let servingLoopDelayMaxMs: number;
    const serving = { from: 0, to: 0 };
    try {
      await child.call<number>('loopDelay');
      serving.from = wallClock();
      timed = await timePages(started.origin, fill.eventIds, pages, Date.now() + loopTimeoutMs);
      serving.to = wallClock();
      servingLoopDelayMaxMs = await child.call<number>('loopDelay');
    } finally {
      await child.call('stop');
    }
    const servingStall = await wake.call<number>('worstBetween', serving);
    const pruning = { from: wallClock(), to: 0 };
    const prune = await child.call<Pruned>(
      'prune',
      { dataDir, now: fill.endAt + PRUNE_AFTER_MS },
      loopTimeoutMs + 120_000,
    );
    pruning.to = wallClock();
    const pruningStall = await wake.call<number>('worstBetween', pruning);
    return {
      checkouts: fill.filled,
      fillSeconds: round(fill.fillMs / 1000, 1),
      bytesBefore,
      bytesAfter: dataDirBytes(dataDir),
      startMs: started.startMs,
      emptyStartMs: empty.startMs,
      pages: timed,
      servingLoopDelayMaxMs,
      prune,
      machineStallMs: { serving: servingStall, pruning: pruningStall },
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(emptyDir, { recursive: true, force: true });
    rmSync(warmupDir, { recursive: true, force: true });
  }
}

/** The table's rows for one size. */
export function growthRows(figures: GrowthFigures): Row[] {
  const at = `@ ${figures.checkouts.toLocaleString('en-US')} checkouts`;
  const { prune } = figures;
  return [
    {
      metric: `[sqlite] file ${at}, before → after pruning (8 days on) and vacuum`,
      value: megabytes(figures.bytesBefore),
      baseline: `${megabytes(figures.bytesAfter)} after (payments kept)`,
      comparison: `−${Math.round(100 * (1 - figures.bytesAfter / figures.bytesBefore))} %`,
      aim: '',
    },
    {
      metric: `[sqlite] proxy start on the file ${at} (createObvProxy)`,
      value: formatMs(figures.startMs),
      baseline: `${formatMs(figures.emptyStartMs)} on a new data directory`,
      comparison: formatDeltaMs(figures.startMs - figures.emptyStartMs),
      aim: '',
    },
    {
      metric: `[sqlite] GET /events page p50 / p99 ${at} (limit ${PAGE_LIMIT})`,
      value: pair(figures.pages.all),
      baseline: `${pair(figures.pages.undelivered)} delivery=undelivered`,
      comparison: `${figures.pages.all.samples} + ${figures.pages.undelivered.samples} pages`,
      aim: '',
    },
    {
      metric: `[sqlite] longest event-loop block ${at}: pruning (sweep, trim, vacuum; checkpoints in a worker)`,
      // The figure the aim judges: the loop's own longest delay meanwhile, or the longest step if longer.
      value: formatMs(Math.max(prune.longestStepMs, prune.loopDelayMaxMs)),
      baseline: `${prune.steps} steps, ${prune.deleted.toLocaleString('en-US')} records, ${(prune.ms / 1000).toFixed(1)} s in all`,
      comparison:
        `longest step ${formatMs(prune.longestStepMs)} (${prune.longestStep}); CPU ≤ ${formatMs(prune.longestStepCpuMs)} a step; machine stall ${formatMs(figures.machineStallMs.pruning)}; ` +
        `${prune.checkpoints} checkpoints off the loop, longest ${formatMs(prune.longestCheckpointMs)}`,
      aim: `≤ ${AIM_BLOCK_MS} ms`,
      met: Math.max(prune.longestStepMs, prune.loopDelayMaxMs) <= AIM_BLOCK_MS,
    },
    {
      metric: `[sqlite] longest event-loop block ${at}: serving GET /events`,
      value: formatMs(figures.servingLoopDelayMaxMs),
      baseline: `p99 page ${formatMs(figures.pages.all.p99)}`,
      comparison: `machine stall ${formatMs(figures.machineStallMs.serving)}`,
      aim: `≤ ${AIM_BLOCK_MS} ms`,
      met: figures.servingLoopDelayMaxMs <= AIM_BLOCK_MS,
    },
  ];
}

export async function measureGrowth(options: BenchOptions): Promise<SectionResult> {
  const { sizes } = options;
  const child = await BenchChild.spawn('growth-proxy.ts', 'growth-proxy', { quiet: true });
  const wake = await BenchChild.spawn('wake-probe.ts', 'wake-probe');
  const bySize: GrowthFigures[] = [];
  try {
    for (const checkouts of sizes.growthCheckouts) bySize.push(await measureSize(child, wake, checkouts, sizes));
  } finally {
    await child.close();
    await wake.close();
  }
  const concurrency = await measureIntakeConcurrency(options);
  return {
    section: 'growth',
    rows: [...bySize.flatMap(growthRows), ...concurrency.rows],
    data: {
      store: 'sqlite',
      pageLimit: PAGE_LIMIT,
      aimBlockMs: AIM_BLOCK_MS,
      bySize,
      intakeByConnections: concurrency.steps,
    },
  };
}
