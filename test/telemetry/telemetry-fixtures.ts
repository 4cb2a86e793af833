import { Writable } from 'node:stream';
import { InMemorySpanExporter, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { LoggerOptions } from '../../src/telemetry/logger.js';
import { createLogger, type Logger } from '../../src/telemetry/logger.js';
import { createTracing, type Tracing, type TracingConfig } from '../../src/telemetry/tracing.js';
import { whenArrived } from './when-arrived.js';

/** The schema's defaults with tracing on and every new trace sampled, calls' and messages' alike. */
export function tracingConfig(overrides: Partial<TracingConfig> = {}): TracingConfig {
  return {
    enable_tracing: true,
    otlp_endpoint: '',
    otlp_timeout: 10_000,
    otlp_headers: {},
    trace_sample_rate: 1,
    message_trace_sample_rate: 1,
    service_name: 'svc',
    service_version: '',
    deployment_environment: 'test',
    ...overrides,
  };
}

export interface MemoryTracing {
  tracing: Tracing;
  exporter: InMemorySpanExporter;
  /** Exports what has ended, then answers every span exported so far. */
  spans(): Promise<ReadableSpan[]>;
  /**
   * Exports what has ended, then resolves once `done` holds for the spans exported, checked at
   * each export: a span that ends later comes with the batch processor's next export.
   */
  spansUntil(done: (spans: readonly ReadableSpan[]) => boolean, what: string, timeoutMs?: number): Promise<ReadableSpan[]>;
}

/** Tracing that keeps finished spans in memory. */
export function memoryTracing(overrides: Partial<TracingConfig> = {}): MemoryTracing {
  const exporter = new InMemorySpanExporter();
  const arrivals = new Set<() => void>();
  const notifying: SpanExporter = {
    export(spans, done) {
      exporter.export(spans, (result) => {
        done(result);
        for (const arrival of [...arrivals]) arrival();
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush(),
  };
  const tracing = createTracing(tracingConfig(overrides), { serviceVersion: '0.0.0-test', exporter: notifying });
  return {
    tracing,
    exporter,
    async spans() {
      await tracing.flush();
      return exporter.getFinishedSpans();
    },
    async spansUntil(done, what, timeoutMs = 10_000) {
      await tracing.flush();
      return whenArrived(arrivals, () => (done(exporter.getFinishedSpans()) ? exporter.getFinishedSpans() : undefined), what, timeoutMs);
    },
  };
}

export interface LogCapture {
  readonly stream: Writable;
  /** Raw lines written so far. */
  text(): string[];
  /** Lines parsed as JSON. */
  records(): Record<string, unknown>[];
  /** Resolves with the first record for which `match` holds, checked as each line is written; rejects after `timeoutMs`. */
  waitFor(match: (record: Record<string, unknown>) => boolean, what: string, timeoutMs?: number): Promise<Record<string, unknown>>;
}

export function captureLog(): LogCapture {
  const lines: string[] = [];
  const arrivals = new Set<() => void>();
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter((line) => line !== ''));
      for (const arrival of [...arrivals]) arrival();
      done();
    },
  });
  const records = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    stream,
    text: () => [...lines],
    records,
    waitFor: (match, what, timeoutMs = 10_000) => whenArrived(arrivals, () => records().find(match), what, timeoutMs),
  };
}

export function capturedLogger(options: Partial<LoggerOptions> = {}): { log: Logger; capture: LogCapture } {
  const capture = captureLog();
  return { capture, log: createLogger({ level: 'trace', ...options, stream: capture.stream }) };
}

/** Parent span id of a finished span ('' for a root). */
export function parentOf(span: ReadableSpan): string {
  return span.parentSpanContext?.spanId ?? '';
}
