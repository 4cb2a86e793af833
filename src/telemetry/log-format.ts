/**
 * How one log record becomes one line: bunyan's JSON (`format = "json"`), or
 * a one-line text form for people at a terminal (`format = "pretty"`):
 *
 *   2025-05-01T12:00:00.000Z INFO  agent transition agent_id=01J… from=starting to=running trace_id=4bf9…
 *
 * time, level, the message, then every other field as key=value (strings
 * quoted when they contain spaces, objects as JSON). The process fields
 * bunyan adds to every record (name, hostname, pid, v) are left out.
 */
import bunyan from 'bunyan';

export type LogFormat = 'json' | 'pretty';

/** Fields the pretty form does not repeat after the message. */
const PRETTY_SKIPPED: ReadonlySet<string> = new Set(['v', 'name', 'hostname', 'pid', 'level', 'time', 'msg', 'message']);
const LEVEL_WIDTH = 5;
const BARE_VALUE = /^[^\s"=]+$/;

export function jsonLine(record: Readonly<Record<string, unknown>>): string {
  return `${JSON.stringify(record)}\n`;
}

function levelName(level: unknown): string {
  const name = typeof level === 'number' ? bunyan.nameFromLevel[level] : undefined;
  return (name ?? `L${String(level)}`).toUpperCase().padEnd(LEVEL_WIDTH);
}

function prettyValue(value: unknown): string {
  if (typeof value === 'string') return BARE_VALUE.test(value) ? value : JSON.stringify(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value) ?? String(value);
}

export function prettyLine(record: Readonly<Record<string, unknown>>): string {
  const time = record.time instanceof Date ? record.time.toISOString() : String(record.time);
  // One line: a multi-line message (a stack, an agent's output) keeps its line breaks escaped.
  const msg = String(record.msg ?? '').replace(/\r?\n/g, '\\n');
  const fields = Object.entries(record)
    .filter(([key, value]) => !PRETTY_SKIPPED.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${prettyValue(value)}`);
  return `${[time, levelName(record.level), msg, ...fields].join(' ')}\n`;
}
