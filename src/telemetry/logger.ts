import bunyan from 'bunyan';
import type { Writable } from 'node:stream';

export type Logger = bunyan;

export interface LoggerOptions {
  level: bunyan.LogLevelString;
  /** Where lines go; standard output by default. */
  stream?: Writable;
  enabled?: boolean;
}

/** The server's root logger: bunyan JSON lines (`level`, `msg`, RFC 3339 `time`, `name`, `pid`, `hostname`). */
export function createLogger(options: LoggerOptions): Logger {
  // Above FATAL nothing is written: the logger object stays, so callers never check.
  const level = options.enabled === false ? bunyan.FATAL + 1 : bunyan.resolveLevel(options.level);
  return bunyan.createLogger({
    name: 'svc',
    level,
    streams: [{ stream: options.stream ?? process.stdout, level }],
    serializers: { err: bunyan.stdSerializers.err },
  });
}
