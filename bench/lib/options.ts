// What a run measures and how big: the full sizes by default, small ones with BENCH_QUICK=1, and a
// `--only relay,size` filter for the sections.

export const SECTIONS = ['size', 'start', 'relay', 'intake', 'memory', 'tokens', 'shopper', 'returning'] as const;
export type SectionName = (typeof SECTIONS)[number];

export interface BenchSizes {
  /** Idle subscribed sockets held open while relay latency is measured. */
  idleSockets: number;
  /** Timed notifications (relay) per side. */
  relaySamples: number;
  /** Timed starts per side. */
  startSamples: number;
  /** Untimed requests first, so JIT and connection set-up stay out of the figures. */
  warmup: number;
  /** Notifications sent per side in the throughput test. */
  intakeRequests: number;
  intakeConnections: number;
  /** The intake requests are split into this many rounds, alternating between the two servers. */
  intakeRounds: number;
  /** Idle subscribed sockets at which memory is read (ascending). */
  memorySockets: readonly number[];
  /** Concurrent starts on a cold token cache. */
  coldStarts: number;
  /** Timed link flows in Chromium (bank redirect → element shows the outcome), after untimed ones. */
  shopperSamples: number;
  shopperWarmup: number;
  /** Timed clicks on a saved account (returning shopper), and the first-time bank flows timed beside them. */
  returningSamples: number;
  returningBankSamples: number;
  /** Upper bound on the whole run; it aborts past this. */
  runTimeoutMs: number;
}

const FULL: BenchSizes = {
  idleSockets: 10_000,
  relaySamples: 3_000,
  startSamples: 2_000,
  warmup: 300,
  intakeRequests: 20_000,
  intakeConnections: 50,
  intakeRounds: 4,
  memorySockets: [10_000, 20_000],
  coldStarts: 100,
  shopperSamples: 200,
  shopperWarmup: 5,
  returningSamples: 300,
  returningBankSamples: 30,
  runTimeoutMs: 25 * 60_000,
};

const QUICK: BenchSizes = {
  idleSockets: 200,
  relaySamples: 300,
  startSamples: 300,
  warmup: 50,
  intakeRequests: 1_000,
  intakeConnections: 10,
  intakeRounds: 2,
  memorySockets: [200, 400],
  coldStarts: 100,
  shopperSamples: 20,
  shopperWarmup: 2,
  returningSamples: 40,
  returningBankSamples: 5,
  runTimeoutMs: 5 * 60_000,
};

export interface BenchOptions {
  quick: boolean;
  sections: SectionName[];
  sizes: BenchSizes;
}

/** Reads `--only a,b` (repeatable) from argv and BENCH_QUICK from the environment. */
export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  const wanted: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    if (argument === '--only') wanted.push(...(argv[++index] ?? '').split(','));
    else if (argument.startsWith('--only=')) wanted.push(...argument.slice('--only='.length).split(','));
    else if (argument === '--quick') continue;
    else throw new Error(`unknown argument ${argument}; use --only ${SECTIONS.join(',')}`);
  }
  const unknown = wanted.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown section(s) ${unknown.join(', ')}; sections are ${SECTIONS.join(', ')}`);
  const quick = env.BENCH_QUICK === '1' || argv.includes('--quick');
  return {
    quick,
    sections: wanted.length > 0 ? SECTIONS.filter((name) => wanted.includes(name)) : [...SECTIONS],
    sizes: quick ? QUICK : FULL,
  };
}
