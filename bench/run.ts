// `npm run bench`: every benchmark of obv-link, each figure beside a baseline measured in the same run.
// Loopback only; every loop is bounded in count and time, and a watchdog ends the run if a step hangs.
//   BENCH_QUICK=1 npm run bench          small sizes (a minute or so)
//   npm run bench -- --only relay,memory  some sections only
//   BENCH_CPU_PROF=1 npm run bench        also profile the servers while measured ($TMPDIR/obv-link-bench-profiles)
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseOptions, SECTIONS, type BenchOptions, type SectionName } from './lib/options.ts';
import { markdownTable, type SectionResult } from './lib/report.ts';
import { openFileLimit } from './lib/limits.ts';
import { killAllChildren } from './lib/rpc.ts';
import { measureElementSize } from './sections/element-size.ts';
import { measureIntakeThroughput } from './sections/intake-throughput.ts';
import { measureRelayLatency } from './sections/relay-latency.ts';
import { measureSocketMemory } from './sections/socket-memory.ts';
import { measureStartOverhead } from './sections/start-overhead.ts';
import { measureShopperLatency } from './sections/shopper-latency.ts';
import { measureTokenCoalescing } from './sections/token-coalescing.ts';
import { measureReturningShopper } from './sections/returning-shopper.ts';

type Section = (options: BenchOptions) => Promise<SectionResult>;

const SECTION_RUNNERS: Record<SectionName, Section> = {
  size: () => measureElementSize(),
  start: measureStartOverhead,
  relay: measureRelayLatency,
  intake: measureIntakeThroughput,
  memory: measureSocketMemory,
  tokens: measureTokenCoalescing,
  shopper: measureShopperLatency,
  returning: measureReturningShopper,
};

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
  console.log(`bench: ${options.quick ? 'QUICK sizes' : 'full sizes'}; sections ${options.sections.join(', ')}`);
  for (const name of options.sections) {
    const sectionStart = Date.now();
    try {
      const result = await SECTION_RUNNERS[name](options);
      results.push(result);
      console.log(`bench: ${name} done in ${((Date.now() - sectionStart) / 1000).toFixed(1)} s`);
      console.log(markdownTable([result]));
    } catch (error) {
      errors[name] = String((error as Error)?.stack ?? error);
      console.error(`bench: ${name} FAILED: ${errors[name]}`);
    } finally {
      killAllChildren();
    }
  }

  console.log(`\nobv-link benchmarks (${options.quick ? 'quick' : 'full'} run, Node ${process.version}, ${cpus().length} CPUs)\n`);
  console.log(markdownTable(results));
  const complete = !options.quick && options.sections.length === SECTIONS.length;
  // Only a complete full-size run replaces the recorded results; quick or filtered runs go to tmp.
  const outFile = complete ? fileURLToPath(new URL('./results.json', import.meta.url)) : join(tmpdir(), 'obv-link-bench-results.json');
  writeFileSync(
    outFile,
    `${JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        mode: options.quick ? 'quick' : 'full',
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
  return Object.keys(errors).length > 0 ? 1 : 0;
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
