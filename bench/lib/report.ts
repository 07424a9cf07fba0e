// The shape every section hands back, and the table printed at the end of a run.

/** One line of the table: a figure of obv-link beside its baseline from the same run. */
export interface Row {
  metric: string;
  /** obv-link's figure, formatted with its unit. */
  value: string;
  /** The baseline's figure, formatted the same way. */
  baseline: string;
  /** How the two compare (added latency, ratio…). */
  comparison: string;
  aim: string;
  /** Whether the aim was met; undefined when the row has no aim. */
  met?: boolean;
}

export interface SectionResult {
  section: string;
  rows: Row[];
  /** Raw figures for results.json. */
  data: Record<string, unknown>;
}

const HEADERS = ['metric', 'obv-link', 'baseline', 'comparison', 'aim', 'met'] as const;

function cells(row: Row): string[] {
  return [
    row.metric,
    row.value,
    row.baseline,
    row.comparison,
    row.aim,
    row.met === undefined ? '' : row.met ? 'yes' : 'NO',
  ];
}

/** A Markdown table (readable in a terminal, pasteable into the README). */
export function markdownTable(results: readonly SectionResult[]): string {
  const rows = results.flatMap((result) => result.rows.map(cells));
  const widths = HEADERS.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] as string).length)),
  );
  const line = (values: readonly string[]): string =>
    `| ${values.map((value, column) => value.padEnd(widths[column] as number)).join(' | ')} |`;
  return [line(HEADERS), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export const formatMs = (ms: number): string => `${ms.toFixed(ms < 10 ? 3 : 1)} ms`;
export const formatDeltaMs = (ms: number): string => `${ms < 0 ? '−' : '+'}${formatMs(Math.abs(ms))}`;
export const formatBytes = (bytes: number): string => `${(bytes / 1024).toFixed(2)} KB`;
export const formatRate = (perSecond: number): string => `${Math.round(perSecond).toLocaleString('en-US')} req/s`;
export const formatRatio = (ratio: number): string => `${ratio.toFixed(2)}×`;
