/** A `StoreLog` that keeps its lines, for tests that check what the store told the operator. */
import type { StoreLog } from '../../src/store/store-log.js';

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  msg: string;
  fields: Record<string, unknown>;
}

export function recordingLog(lines: LogLine[]): StoreLog {
  const at = (level: LogLine['level']) => (fields: object, msg: string) => void lines.push({ level, msg, fields: fields as Record<string, unknown> });
  return { info: at('info'), warn: at('warn'), error: at('error') };
}
