// The shopper sections' aims (issue 40 §2): the element's time read over a bare page's doing the same
// requests, socket frame and one line in the same browser and run (fixtures/bare-shopper-pages.ts). An
// absolute aim cannot be judged on a shared 2-core machine, where Chromium, the servers and the harness
// take turns on the cores (identical runs gave 87 to 118 ms at p99); the bare page meets the same load.
import { formatDeltaMs, formatMs, formatRatio, type Row } from './report.ts';
import type { LatencySummary } from './stats.ts';

/** What the element may add to the bare page at p50. */
export const AIM_OVER_BARE_P50_MS = 15;
/** How many times the bare page's p99 the element's may be. */
export const AIM_OVER_BARE_P99_RATIO = 1.3;

/** Two rows, p50 and p99: `what` for the element beside the bare page, each judged on its aim. */
export function overBareRows(what: string, element: LatencySummary, bare: LatencySummary): Row[] {
  const added = element.p50 - bare.p50;
  const ratio = element.p99 / bare.p99;
  return [
    {
      metric: `${what} p50 (Chromium): element over a bare page`,
      value: formatMs(element.p50),
      baseline: `${formatMs(bare.p50)} bare page`,
      comparison: formatDeltaMs(added),
      aim: `≤ +${AIM_OVER_BARE_P50_MS} ms over bare`,
      met: added <= AIM_OVER_BARE_P50_MS,
    },
    {
      metric: `${what} p99 (Chromium): element over a bare page`,
      value: formatMs(element.p99),
      baseline: `${formatMs(bare.p99)} bare page`,
      comparison: formatRatio(ratio),
      aim: `≤ ${formatRatio(AIM_OVER_BARE_P99_RATIO)} bare`,
      met: ratio <= AIM_OVER_BARE_P99_RATIO,
    },
  ];
}
