import { MAX_TIMER_MS } from '../../supervisors/index.js';
import { formatRollbackWindow, parseRollbackWindow, type RollbackWindow } from './rollback-window.js';
import { formatDuration, formatSize, parseCpu, parseDuration, parseSize } from './units.js';

/**
 * One configuration setting: how to read it from TOML, environment or CLI
 * text, its default and its one-line doc. `parse` returns `undefined` for a
 * value it refuses; the loader turns that into an error naming the key.
 */
export interface Setting<T> {
  readonly kind: string;
  readonly default: T;
  readonly doc: string;
  parse(raw: unknown): T | undefined;
  /** The value as text the environment or a flag accepts (`30s`, `10MiB`, `a,b`). */
  format(value: T): string;
  /** A secret: redacted wherever the configuration is shown. */
  readonly secret?: boolean;
  /** Read from the environment only: a TOML file is shared and checked in, a flag shows in `ps`. */
  readonly environmentOnly?: boolean;
}

function make<T>(kind: string, rawDefault: unknown, doc: string, parse: (raw: unknown) => T | undefined, format: (value: T) => string = String): Setting<T> {
  const checked = parse(rawDefault);
  if (checked === undefined) throw new Error(`default ${String(rawDefault)} is not a valid ${kind}`);
  return { kind, default: checked, doc, parse, format };
}

const stringOrNumber = (raw: unknown): string | number | undefined =>
  typeof raw === 'string' || typeof raw === 'number' ? raw : undefined;

export function bool(defaultValue: boolean, doc: string): Setting<boolean> {
  return make('boolean', defaultValue, doc, (raw) => {
    if (typeof raw === 'boolean') return raw;
    if (raw === 'true' || raw === '1' || raw === 'yes' || raw === 'on') return true;
    if (raw === 'false' || raw === '0' || raw === 'no' || raw === 'off') return false;
    return undefined;
  });
}

export function int(defaultValue: number, doc: string, min = 0, max = Number.MAX_SAFE_INTEGER): Setting<number> {
  const kind = max === Number.MAX_SAFE_INTEGER ? `integer ≥ ${min}` : `integer (${min}..${max})`;
  return make(kind, defaultValue, doc, (raw) => {
    const value = typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw;
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max ? value : undefined;
  });
}

/**
 * A decimal number as text (`0.25`, `.5`, `1`, `1e-2`). `Number()` alone also
 * reads `0x1`, `0b1` and `Infinity`, which no one means for a ratio.
 */
const DECIMAL = /^\s*(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

export function ratio(defaultValue: number, doc: string): Setting<number> {
  return make('number (0..1)', defaultValue, doc, (raw) => {
    const value = typeof raw === 'string' && DECIMAL.test(raw) ? Number(raw) : raw;
    return typeof value === 'number' && value >= 0 && value <= 1 ? value : undefined;
  });
}

export function text(defaultValue: string, doc: string): Setting<string> {
  return make('string', defaultValue, doc, (raw) => (typeof raw === 'string' ? raw : undefined));
}

export function oneOf<const T extends string>(values: readonly T[], defaultValue: T, doc: string): Setting<T> {
  return make(values.join(' | '), defaultValue, doc, (raw) =>
    typeof raw === 'string' && (values as readonly string[]).includes(raw) ? (raw as T) : undefined,
  );
}

/** Milliseconds; reads `500ms`, `30s`, `5m`, `1h`, `30d` or a number of milliseconds. */
export function duration(defaultValue: string, doc: string): Setting<number> {
  return make('duration', defaultValue, doc, (raw) => {
    const value = stringOrNumber(raw);
    return value === undefined ? undefined : parseDuration(value);
  }, formatDuration);
}

/**
 * A duration that arms one timer: from 1 ms to `MAX_TIMER_MS` (about 24.8
 * days). Node fires a longer timer after 1 ms instead, so `request_timeout =
 * "30d"` failed every request at once; 0 did the same. Refusing either names the key.
 */
export function timeout(defaultValue: string, doc: string): Setting<number> {
  return make('duration (1ms–24.8d)', defaultValue, doc, (raw) => {
    const value = stringOrNumber(raw);
    const ms = value === undefined ? undefined : parseDuration(value);
    return ms !== undefined && ms >= 1 && ms <= MAX_TIMER_MS ? ms : undefined;
  }, formatDuration);
}

/** A number of messages or a duration with its unit; `0` is off (rollback-window.ts). */
export function rollbackWindow(defaultValue: string, doc: string): Setting<RollbackWindow> {
  return make('messages or duration', defaultValue, doc, parseRollbackWindow, formatRollbackWindow);
}

/** Bytes; reads `512MB`, `64KiB` or a number of bytes. */
export function size(defaultValue: string, doc: string): Setting<number> {
  return make('size', defaultValue, doc, (raw) => {
    const value = stringOrNumber(raw);
    return value === undefined ? undefined : parseSize(value);
  }, formatSize);
}

/** Millicores; reads `100m` or a number of cores. */
export function cpu(defaultValue: string, doc: string): Setting<number> {
  return make('cpu', defaultValue, doc, (raw) => {
    const value = stringOrNumber(raw);
    return value === undefined ? undefined : parseCpu(value);
  }, (m) => `${m}m`);
}

/** `host:port`, IPv6 in brackets; port 0 binds an ephemeral port. An empty string means disabled where the doc says so. */
export function address(defaultValue: string, doc: string, allowEmpty = false): Setting<string> {
  return make('address (host:port)', defaultValue, doc, (raw) => {
    if (typeof raw !== 'string') return undefined;
    if (raw === '') return allowEmpty ? raw : undefined;
    const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(raw);
    if (!match || Number(match[2]) > 65535) return undefined;
    return raw;
  });
}

/** Text read from the environment only and never shown; empty means unset. */
export function secret(doc: string): Setting<string> {
  return { ...text('', doc), kind: 'secret (environment only)', secret: true, environmentOnly: true };
}

/** A list whose items are each one of `values`, without repeats; TOML arrays or comma-separated text. */
export function subsetOf<const T extends string>(values: readonly T[], defaultValue: readonly T[], doc: string): Setting<T[]> {
  const plain = list(defaultValue, doc);
  return make(`list of: ${values.join(', ')}`, [...defaultValue], doc, (raw) => {
    const items = plain.parse(raw);
    if (items === undefined || new Set(items).size !== items.length || !items.every((item) => (values as readonly string[]).includes(item))) return undefined;
    return items as T[];
  }, (v) => v.join(','));
}

/** A list; TOML arrays or comma-separated text. */
export function list(defaultValue: readonly string[], doc: string): Setting<string[]> {
  return make('list of strings', [...defaultValue], doc, (raw) => {
    if (typeof raw === 'string') return raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
    if (Array.isArray(raw) && raw.every((item): item is string => typeof item === 'string')) return [...raw];
    return undefined;
  }, (v) => v.join(','));
}

/** A string-to-string table; TOML tables or `k=v,k2=v2` text. */
export function table(doc: string): Setting<Record<string, string>> {
  return make('table of strings', {}, doc, (raw) => {
    if (typeof raw === 'string') {
      const out: Record<string, string> = {};
      for (const pair of raw.split(',').filter((p) => p.trim() !== '')) {
        const eq = pair.indexOf('=');
        if (eq <= 0) return undefined;
        out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
      }
      return out;
    }
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
      const entries = Object.entries(raw);
      if (!entries.every(([, v]) => typeof v === 'string')) return undefined;
      return Object.fromEntries(entries) as Record<string, string>;
    }
    return undefined;
  }, (v) => Object.entries(v).map(([k, x]) => `${k}=${x}`).join(','));
}
