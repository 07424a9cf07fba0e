// `npm run bench`: every benchmark of obv-link, each figure beside a baseline measured in the same run.
// Loopback only; every loop is bounded in count and time, and a watchdog ends the run if a step hangs.
//   npm run bench -- --quick               small sizes, no aim checked, nothing recorded (CI runs it)
//   npm run bench -- --only relay,memory   some sections only
//   npm run bench -- --storage sqlite      the per-storage sections on these backends only (default all)
//   BENCH_CPU_PROF=1 npm run bench         also profile the servers while measured ($TMPDIR/obv-link-bench-profiles)
// A section that throws, or hands back no figure, fails the run: exit 1, and bench/results.json is kept.
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_STORAGES,
  parseOptions,
  PER_STORAGE_SECTIONS,
  SECTIONS,
  type BenchOptions,
  type SectionName,
  type StorageName,
} from './lib/options.ts';
import { markdownTable, type SectionResult } from './lib/report.ts';
import { openFileLimit } from './lib/limits.ts';
import { killAllChildren } from './lib/rpc.ts';
import { openStorage, type BenchStorage } from './lib/storage.ts';
import { measureElementSize } from './sections/element-size.ts';
import { measureIntakeThroughput } from './sections/intake-throughput.ts';
import { measurePayment } from './sections/payment.ts';
import { measureRelayLatency } from './sections/relay-latency.ts';
import { measureRelayAcrossInstances } from './sections/relay-instances.ts';
import { measureSocketMemory } from './sections/socket-memory.ts';
import { measureStartOverhead } from './sections/start-overhead.ts';
import { measureShopperLatency } from './sections/shopper-latency.ts';
import { measureTokenCoalescing } from './sections/token-coalescing.ts';
import { measureReturningShopper } from './sections/returning-shopper.ts';
import { measureGrowth } from './sections/growth.ts';
import { measureOutboxSealing } from './sections/outbox-seal.ts';

type Section = (options: BenchOptions, storage: BenchStorage) => Promise<SectionResult>;

const SECTION_RUNNERS: Record<SectionName, Section> = {
  size: (options) => measureElementSize(options),
  start: measureStartOverhead,
  relay: measureRelayLatency,
  'relay-instances': (options) => measureRelayAcrossInstances(options),
  intake: measureIntakeThroughput,
  memory: measureSocketMemory,
  tokens: measureTokenCoalescing,
  pay: measurePayment,
  shopper: measureShopperLatency,
  returning: measureReturningShopper,
  growth: (options) => measureGrowth(options),
  outbox: (options) => measureOutboxSealing(options),
};

/** A section that "succeeded" without a figure (no sample taken, a division by zero) failed. */
export function checkFigures(result: SectionResult): void {
  if (result.rows.length === 0) throw new Error(`${result.section}: no figures`);
  const broken = result.rows.filter((row) => /NaN|Infinity/.test(`${row.value} ${row.baseline} ${row.comparison}`));
  if (broken.length > 0)
    throw new Error(`${result.section}: no figure for ${broken.map((row) => row.metric).join('; ')}`);
}

/** Quick runs are too small to judge a figure by: the aims are shown, never checked. */
function withoutAims(result: SectionResult): SectionResult {
  return {
    ...result,
    rows: result.rows.map(({ met: _met, ...row }) => ({ ...row, aim: row.aim && `${row.aim} (not checked)` })),
  };
}

/** Runs `name` on one storage backend (fresh: its own temp dir or redis-server), its figures labelled with it. */
async function runOnStorage(
  name: SectionName,
  options: BenchOptions,
  storageName: StorageName,
): Promise<SectionResult> {
  const storage = await openStorage(storageName);
  try {
    const result = await SECTION_RUNNERS[name](options, storage);
    return { ...result, rows: result.rows.map((row) => ({ ...row, metric: `[${storageName}] ${row.metric}` })) };
  } finally {
    killAllChildren();
    await storage.close();
  }
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const watchdog = setTimeout(() => {
    console.error(`bench: the run exceeded ${options.sizes.runTimeoutMs / 60_000} minutes; aborting`);
    killAllChildren();
    process.exit(2);
  }, options.sizes.runTimeoutMs);
  watchdog.unref();

  const startedAt = new Date();
  const loadAtStart = loadavg();
  const results: SectionResult[] = [];
  const errors: Record<string, string> = {};
  // What the sections that do not depend on the storage get (memory opens nothing).
  const inMemory = await openStorage('memory');
  console.log(
    `bench: ${options.quick ? 'QUICK sizes, aims not checked' : 'full sizes'}; sections ${options.sections.join(', ')}; storage ${options.storages.join(', ')} for ${PER_STORAGE_SECTIONS.join(', ')}`,
  );
  for (const name of options.sections) {
    const perStorage = PER_STORAGE_SECTIONS.includes(name);
    // One result per section: per-storage sections hold a row set and a data entry per backend.
    const merged: SectionResult = { section: name, rows: [], data: perStorage ? { byStorage: {} } : {} };
    for (const storage of perStorage ? options.storages : (['memory'] as const)) {
      const label = perStorage ? `${name} [${storage}]` : name;
      const sectionStart = Date.now();
      try {
        let result = perStorage
          ? await runOnStorage(name, options, storage)
          : await SECTION_RUNNERS[name](options, inMemory);
        checkFigures(result);
        if (options.quick) result = withoutAims(result);
        merged.rows.push(...result.rows);
        if (perStorage) (merged.data.byStorage as Record<string, unknown>)[storage] = result.data;
        else merged.data = result.data;
        console.log(`bench: ${label} done in ${((Date.now() - sectionStart) / 1000).toFixed(1)} s`);
        console.log(markdownTable([result]));
      } catch (error) {
        errors[label] = String((error as Error)?.stack ?? error);
        console.error(`bench: ${label} FAILED: ${errors[label]}`);
      } finally {
        killAllChildren();
      }
    }
    if (merged.rows.length > 0) results.push(merged);
  }

  console.log(
    `\nobv-link benchmarks (${options.quick ? 'quick' : 'full'} run, Node ${process.version}, ${cpus().length} CPUs)\n`,
  );
  console.log(markdownTable(results));
  const failed = Object.keys(errors);
  const complete =
    !options.quick &&
    options.sections.length === SECTIONS.length &&
    DEFAULT_STORAGES.every((name) => options.storages.includes(name)) &&
    failed.length === 0;
  // Only a complete full-size run without a failure replaces the recorded results; any other goes to
  // --out, else tmp (a quick run never touches bench/results.json or docs/PERFORMANCE.md).
  const outFile = complete
    ? fileURLToPath(new URL('./results.json', import.meta.url))
    : resolve(options.out ?? join(tmpdir(), 'obv-link-bench-results.json'));
  writeFileSync(
    outFile,
    `${JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        mode: options.quick ? 'quick' : 'full',
        storages: options.storages,
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model,
        // Other work on the machine moves absolute figures; the ratios to same-run baselines move less.
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadavg(),
        openFileLimit: openFileLimit(),
        sizes: options.sizes,
        rows: results.flatMap((result) => result.rows.map((row) => ({ section: result.section, ...row }))),
        sections: Object.fromEntries(results.map((result) => [result.section, result.data])),
        errors,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nbench: wrote ${outFile}`);
  if (failed.length > 0) {
    console.error(
      `\nbench: FAILED — ${failed.length} section run(s) threw or gave no figure: ${failed.join(', ')}; the table above is partial (exit 1)`,
    );
    return 1;
  }
  return 0;
}

main().then(
  (code) => {
    killAllChildren();
    process.exit(code);
  },
  (error: unknown) => {
    console.error(error);
    killAllChildren();
    process.exit(1);
  },
);
