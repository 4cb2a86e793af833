/**
 * A small benchmark harness: sample a function, summarise the samples
 * (median, p99), and print one table where each row is compared with a
 * baseline measured in the same run.
 */

export interface Summary {
  samples: number;
  median: number;
  p99: number;
}

export interface Row {
  name: string;
  /** Unit of `median`/`p99` (e.g. µs, ms, msg/s, KiB). */
  unit: string;
  median: number;
  p99?: number;
  baseline?: { name: string; median: number };
  /** The target, as text, and whether this run met it. */
  target?: string;
  ok?: boolean;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

export function summarise(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return { samples: sorted.length, median: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** Times `fn` `iterations` times after `warmup` runs; returns microseconds per call. */
export async function sampleMicros(fn: () => unknown, iterations: number, warmup = Math.min(100, iterations)): Promise<Summary> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return summarise(samples);
}

/** Synchronous variant: no await between samples, so it measures the call alone. */
export function sampleMicrosSync(fn: () => unknown, iterations: number, warmup = Math.min(100, iterations)): Summary {
  for (let i = 0; i < warmup; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return summarise(samples);
}

function fmt(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return '';
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

export function renderTable(rows: readonly Row[]): string {
  const header = ['benchmark', 'median', 'p99', 'unit', 'baseline (median)', 'ratio', 'target', 'ok'];
  const body = rows.map((r) => [
    r.name,
    fmt(r.median),
    fmt(r.p99),
    r.unit,
    r.baseline ? `${r.baseline.name} (${fmt(r.baseline.median)})` : '',
    r.baseline ? `${(r.median / r.baseline.median).toFixed(2)}×` : '',
    r.target ?? '',
    r.ok === undefined ? '' : r.ok ? 'yes' : 'NO',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => (line[i] ?? '').length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}
