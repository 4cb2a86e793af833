/**
 * A small reader of the Prometheus text exposition format (0.0.4), enough to
 * compare the text with `toSamples` and to check its structure when
 * `promtool` is not installed.
 */
import { spawnSync } from 'node:child_process';

export interface TextSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface TextFamily {
  name: string;
  type: string;
  help: string;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'Nan' || text === 'NaN') return NaN;
  return Number(text);
}

export function parsePrometheusText(text: string): { families: Map<string, TextFamily>; samples: TextSample[]; errors: string[] } {
  const families = new Map<string, TextFamily>();
  const samples: TextSample[] = [];
  const errors: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta !== null) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      const family = families.get(name) ?? { name, type: '', help: '' };
      if (kind === 'HELP') family.help = rest;
      else family.type = rest;
      families.set(name, family);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (match === null) {
      errors.push(`not a sample line: ${line}`);
      continue;
    }
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) labels[key!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const value = parseValue(match[3]!);
    if (Number.isNaN(value) && match[3] !== 'Nan' && match[3] !== 'NaN') errors.push(`not a number: ${line}`);
    const name = match[1]!;
    const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ''));
    if (family === undefined || family.type === '') errors.push(`sample before its # TYPE: ${name}`);
    samples.push({ name, labels, value });
  }
  return { families, samples, errors };
}

/** `promtool check metrics` on the text, or undefined when promtool is not on PATH. */
export function promtoolCheck(text: string): { ok: boolean; output: string } | undefined {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error !== undefined && (run.error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
}
