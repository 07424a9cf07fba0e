// What a run measures and how big: the full sizes by default, small ones with `--quick` (or
// BENCH_QUICK=1), a `--only relay,size` filter for the sections, the session storage backends the
// storage-dependent sections run on (`--storage memory,sqlite,postgres,redis`), and where a run that is not a
// complete full one writes its results (`--out <file>`).

export const SECTIONS = [
  'size',
  'start',
  'relay',
  'relay-instances',
  'intake',
  'memory',
  'tokens',
  'pay',
  'shopper',
  'returning',
  'growth',
  'outbox',
] as const;
export type SectionName = (typeof SECTIONS)[number];

/**
 * The proxy's session storage backends (createObvProxy's `storage`), and two Redis set-ups with a replica
 * (storage.ts): `redis-replica` (not waited for) and `redis-wait` (each money write waits for it:
 * OBV_REDIS_MIN_REPLICAS=1), so one run shows what the wait costs.
 */
export const STORAGES = ['memory', 'sqlite', 'postgres', 'redis', 'redis-replica', 'redis-wait'] as const;
export type StorageName = (typeof STORAGES)[number];
/**
 * What a run without `--storage` measures. PostgreSQL runs when named (`--storage postgres`), to keep the
 * full run's length; the relay across instances (relay-instances) runs on PostgreSQL and Redis always.
 */
export const DEFAULT_STORAGES: readonly StorageName[] = ['memory', 'sqlite', 'redis'];

/** The sections that touch the session store on their measured path: each runs once per storage backend. */
export const PER_STORAGE_SECTIONS: readonly SectionName[] = ['start', 'intake', 'pay', 'returning'];

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
  /** Timed payments (POST /transactions with a link reference), after `warmup`-sized untimed ones. */
  paySamples: number;
  /** Checkouts the growth section fills a SQLite file with, one file per size (SQLite only, whatever `--storage`). */
  growthCheckouts: readonly number[];
  /** GET /events pages timed per filter on each growth file. */
  growthPages: number;
  /** The concurrent connections the growth section's intake steps run at (sections/intake-concurrency.ts). */
  growthConcurrency: readonly number[];
  /** Notifications per server at each of those steps. */
  growthConcurrencyRequests: number;
  /** Upper bound on filling one growth file (past it the file holds the checkouts made so far, and the rows say how many). */
  growthFillTimeoutMs: number;
  /** Upper bound on each section's measuring loop: past it the loop stops with the samples it has. */
  loopTimeoutMs: number;
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
  paySamples: 1_000,
  growthCheckouts: [20_000, 200_000],
  growthPages: 500,
  growthConcurrency: [1, 10, 100],
  growthConcurrencyRequests: 3_000,
  // 200,000 checkouts take 10–20 minutes on two busy vCPUs.
  growthFillTimeoutMs: 30 * 60_000,
  loopTimeoutMs: 10 * 60_000,
  // Four sections run once per storage backend (three by default); growth fills 220,000 checkouts.
  runTimeoutMs: 90 * 60_000,
};

/** Enough to show every section works (CI runs it), not to judge a figure: no aim is checked. */
const QUICK: BenchSizes = {
  idleSockets: 200,
  relaySamples: 200,
  startSamples: 100,
  warmup: 20,
  intakeRequests: 200,
  intakeConnections: 10,
  intakeRounds: 1,
  memorySockets: [200, 400],
  coldStarts: 50,
  shopperSamples: 3,
  shopperWarmup: 1,
  returningSamples: 8,
  returningBankSamples: 1,
  paySamples: 30,
  growthCheckouts: [200],
  growthPages: 20,
  growthConcurrency: [1, 10, 100],
  growthConcurrencyRequests: 200,
  growthFillTimeoutMs: 30_000,
  loopTimeoutMs: 15_000,
  runTimeoutMs: 5 * 60_000,
};

export interface BenchOptions {
  quick: boolean;
  sections: SectionName[];
  /** The storage backends the per-storage sections run on, in this order. */
  storages: StorageName[];
  /** Where the results go when the run does not replace bench/results.json; undefined: $TMPDIR. */
  out: string | undefined;
  sizes: BenchSizes;
}

const USAGE = `use --quick, --only ${SECTIONS.join(',')}, --storage ${STORAGES.join(',')}, --out <file>`;

function list<T extends string>(value: string, known: readonly T[], what: string): T[] {
  const names = value.split(',').filter(Boolean);
  const unknown = names.filter((name) => !(known as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown ${what}(s) ${unknown.join(', ')}; ${what}s are ${known.join(', ')}`);
  return names as T[];
}

/**
 * Reads `--only a,b` and `--storage a,b` (each repeatable, `--x v` or `--x=v`), `--quick` and
 * `--out <file>` from argv, and BENCH_QUICK=1 from the environment.
 */
export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  const wanted: SectionName[] = [];
  const storages: StorageName[] = [];
  let quick = env.BENCH_QUICK === '1';
  let out: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    const [flag, inline] =
      argument.startsWith('--') && argument.includes('=')
        ? [argument.slice(0, argument.indexOf('=')), argument.slice(argument.indexOf('=') + 1)]
        : [argument, undefined];
    const value = (): string => {
      const given = inline ?? argv[++index];
      if (given === undefined || given === '') throw new Error(`${flag} needs a value; ${USAGE}`);
      return given;
    };
    if (flag === '--only') wanted.push(...list(value(), SECTIONS, 'section'));
    else if (flag === '--storage') storages.push(...list(value(), STORAGES, 'storage'));
    else if (flag === '--out') out = value();
    else if (argument === '--quick') quick = true;
    else throw new Error(`unknown argument ${argument}; ${USAGE}`);
  }
  return {
    quick,
    sections: wanted.length > 0 ? SECTIONS.filter((name) => wanted.includes(name)) : [...SECTIONS],
    storages: storages.length > 0 ? STORAGES.filter((name) => storages.includes(name)) : [...DEFAULT_STORAGES],
    out,
    sizes: quick ? QUICK : FULL,
  };
}
