// Summaries of latency samples. Percentiles use the nearest-rank method on the sorted samples, so a
// p99 is always a latency that was actually observed.

/** Latency distribution of one series of samples, in milliseconds. */
export interface LatencySummary {
  samples: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile `p` (0–100) of ascending `sorted`. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export function summarize(samplesMs: readonly number[]): LatencySummary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    samples: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN,
  };
}

/** Milliseconds from a monotonic clock (sub-microsecond resolution). */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Rounds for display and for results.json (latencies to µs, sizes and rates to whole units). */
export function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
