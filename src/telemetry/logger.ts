/**
 * The server's root logger: bunyan, one line per record, on standard output
 * by default. Every line has bunyan's `level` (number), `msg`, `time`
 * (RFC 3339), `name`, `hostname`, `pid`, and also `message` (the same text,
 * for pipelines that expect that key), plus `trace_id`/`span_id` of the
 * active OpenTelemetry span when `include_trace_id`/`include_span_id` are on.
 *
 * All of that happens in one raw bunyan stream at write time: bunyan calls it
 * synchronously inside `log.info(...)`, so `context.active()` there is the
 * caller's context, and every field passes through the redaction of
 * log-redaction.ts before it is encoded.
 */
import { context, trace } from '@opentelemetry/api';
import bunyan from 'bunyan';
import type { Writable } from 'node:stream';
import { mathRandom, type Random } from '../../supervisors/index.js';
import type { Config } from '../config/schema.js';
import { jsonLine, prettyLine, type LogFormat } from './log-format.js';
import { redactFields } from './log-redaction.js';

export type Logger = bunyan;

export interface LoggerOptions {
  level: bunyan.LogLevelString;
  /** Where lines go; standard output by default. */
  stream?: Writable;
  enabled?: boolean;
  /** Default json. */
  format?: LogFormat;
  /** Add the active span's trace id as `trace_id`. Default true. */
  includeTraceId?: boolean;
  /** Add the active span's id as `span_id`. Default false. */
  includeSpanId?: boolean;
  /** Fraction of debug and trace lines written (0..1). Default 1. */
  debugSampleRate?: number;
  /** Draws for `debugSampleRate` (tests pass a fixed sequence). */
  random?: Random;
}

/** The `observability` settings that shape the log. */
export function loggerOptionsFrom(observability: Config['observability'], stream?: Writable): LoggerOptions {
  return {
    level: observability.log_level,
    enabled: observability.enable_logging,
    format: observability.format,
    includeTraceId: observability.include_trace_id,
    includeSpanId: observability.include_span_id,
    debugSampleRate: observability.debug_sample_rate,
    stream,
  };
}

/** bunyan's own keys, written as bunyan made them. */
const CORE_KEYS: ReadonlySet<string> = new Set(['name', 'hostname', 'pid', 'level', 'msg', 'time', 'v']);
/** In svc a `message` field is an ACL message; `message` itself is the line's text, so the field moves here. */
export const ACL_MESSAGE_KEY = 'acl_message';

type LogRecord = Record<string, unknown>;

function recordWriter(out: Writable, options: LoggerOptions) {
  const encode = options.format === 'pretty' ? prettyLine : jsonLine;
  const includeTraceId = options.includeTraceId ?? true;
  const includeSpanId = options.includeSpanId ?? false;
  const sampleRate = options.debugSampleRate ?? 1;
  const random = options.random ?? mathRandom;

  return {
    write(record: LogRecord): void {
      const level = typeof record.level === 'number' ? record.level : bunyan.INFO;
      const debug = level <= bunyan.DEBUG;
      if (debug && sampleRate < 1 && random.next() >= sampleRate) return;

      const fields: LogRecord = {};
      for (const [key, value] of Object.entries(record)) if (!CORE_KEYS.has(key)) fields[key === 'message' ? ACL_MESSAGE_KEY : key] = value;
      const clean = redactFields(fields, { keepContent: debug });

      const line: LogRecord = {};
      for (const [key, value] of Object.entries(record)) {
        if (!CORE_KEYS.has(key)) continue;
        line[key] = value;
        if (key === 'msg') line.message = value;
      }
      Object.assign(line, clean);
      const span = trace.getSpanContext(context.active());
      if (span !== undefined && trace.isSpanContextValid(span)) {
        // A caller that names a trace explicitly (a door logging for a call) keeps its id.
        if (includeTraceId && line.trace_id === undefined) line.trace_id = span.traceId;
        if (includeSpanId && line.span_id === undefined) line.span_id = span.spanId;
      }
      out.write(encode(line));
    },
  };
}

export function createLogger(options: LoggerOptions): Logger {
  // Above FATAL nothing is written: the logger object stays, so callers never check.
  const level = options.enabled === false ? bunyan.FATAL + 1 : bunyan.resolveLevel(options.level);
  const writer = recordWriter(options.stream ?? process.stdout, options);
  return bunyan.createLogger({
    name: 'svc',
    level,
    // bunyan hands a raw stream the record object and calls only its write().
    streams: [{ type: 'raw', level, stream: writer as unknown as NodeJS.WritableStream }],
    serializers: { err: bunyan.stdSerializers.err },
  });
}
