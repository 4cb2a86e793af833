import { Writable } from 'node:stream';
import { tracing as sdk } from '@opentelemetry/sdk-node';
import type { LoggerOptions } from '../../src/telemetry/logger.js';
import { createLogger, type Logger } from '../../src/telemetry/logger.js';
import { createTracing, type Tracing, type TracingConfig } from '../../src/telemetry/tracing.js';

/** The schema's defaults with tracing on and every root sampled. */
export function tracingConfig(overrides: Partial<TracingConfig> = {}): TracingConfig {
  return {
    enable_tracing: true,
    otlp_endpoint: '',
    otlp_timeout: 10_000,
    otlp_headers: {},
    trace_sample_rate: 1,
    service_name: 'svc',
    service_version: '',
    deployment_environment: 'test',
    ...overrides,
  };
}

/** Tracing that keeps finished spans in memory. */
export function memoryTracing(overrides: Partial<TracingConfig> = {}): { tracing: Tracing; exporter: sdk.InMemorySpanExporter; spans(): Promise<sdk.ReadableSpan[]> } {
  const exporter = new sdk.InMemorySpanExporter();
  const tracing = createTracing(tracingConfig(overrides), { serviceVersion: '0.0.0-test', exporter });
  return {
    tracing,
    exporter,
    async spans() {
      await tracing.flush();
      return exporter.getFinishedSpans();
    },
  };
}

export interface LogCapture {
  readonly stream: Writable;
  /** Raw lines written so far. */
  text(): string[];
  /** Lines parsed as JSON. */
  records(): Record<string, unknown>[];
}

export function captureLog(): LogCapture {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter((line) => line !== ''));
      done();
    },
  });
  return {
    stream,
    text: () => [...lines],
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

export function capturedLogger(options: Partial<LoggerOptions> = {}): { log: Logger; capture: LogCapture } {
  const capture = captureLog();
  return { capture, log: createLogger({ level: 'trace', ...options, stream: capture.stream }) };
}

/** Parent span id of a finished span ('' for a root). */
export function parentOf(span: sdk.ReadableSpan): string {
  return span.parentSpanContext?.spanId ?? '';
}
