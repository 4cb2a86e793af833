/**
 * Parsers for the value syntaxes of the configuration (DESIGN.md section 5):
 * durations (`500ms`, `30s`, `5m`, `1h`, `30d`, or milliseconds), sizes
 * (`512MB`, `64KiB`, or bytes) and CPU (`100m` millicores, or cores).
 * Each returns `undefined` for text it cannot read; the loader names the key.
 */

const DURATION_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const SIZE_BYTES: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1_000,
  mb: 1_000_000,
  gb: 1_000_000_000,
  tb: 1_000_000_000_000,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

const NUMBER_WITH_UNIT = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/;

function withUnit(text: string, units: Readonly<Record<string, number>>, bare: number): number | undefined {
  const match = NUMBER_WITH_UNIT.exec(text);
  if (!match) return undefined;
  const value = Number(match[1]);
  const unit = (match[2] ?? '').toLowerCase();
  const scale = unit === '' ? bare : units[unit];
  if (scale === undefined || !Number.isFinite(value)) return undefined;
  return Math.round(value * scale);
}

/** Milliseconds. A bare number is milliseconds. */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
  return withUnit(value, DURATION_MS, 1);
}

/** Bytes. A bare number is bytes. */
export function parseSize(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  return withUnit(value, SIZE_BYTES, 1);
}

/** Millicores. `100m` is a tenth of a core; a bare number is whole cores. */
export function parseCpu(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) : undefined;
  return withUnit(value, { m: 1 }, 1000);
}

/** Formats milliseconds back into the shortest exact unit, for docs and `--print-config`. */
export function formatDuration(ms: number): string {
  for (const [unit, scale] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000]] as const) {
    if (ms >= scale && ms % scale === 0) return `${ms / scale}${unit}`;
  }
  return `${ms}ms`;
}

export function formatSize(bytes: number): string {
  for (const [unit, scale] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (bytes >= scale && bytes % scale === 0) return `${bytes / scale}${unit}`;
  }
  return `${bytes}`;
}
