/**
 * The OTLP span exporter for `observability.otlp_endpoint`, wrapped so an
 * unreachable or failing collector costs one log line per interval, never a
 * line per batch and never an error in an API call (spans are exported from
 * the batch processor's timer, off the request path).
 */
import { Metadata } from '@grpc/grpc-js';
import { OTLPTraceExporter as OtlpGrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as OtlpHttpTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { core, type tracing } from '@opentelemetry/sdk-node';
import type { Clock } from '../../supervisors/index.js';
import type { Logger } from './logger.js';
import type { OtlpEndpoint } from './otlp-endpoint.js';

export type SpanExporter = tracing.SpanExporter;
type ExportResult = Parameters<Parameters<SpanExporter['export']>[1]>[0];

/** A failing collector is reported at most once per this interval; the line counts the failures in between. */
export const EXPORT_FAILURE_LOG_INTERVAL_MS = 60_000;
/** Export requests in flight at once; a slow collector makes the batch processor drop spans instead of piling up sockets. */
export const EXPORT_CONCURRENCY = 4;

export interface OtlpExporterOptions {
  timeoutMs: number;
  /** `observability.otlp_headers`: HTTP headers, or gRPC metadata for a grpc endpoint. */
  headers: Readonly<Record<string, string>>;
}

export function createOtlpExporter(endpoint: OtlpEndpoint, options: OtlpExporterOptions): SpanExporter {
  if (endpoint.protocol === 'http') {
    return new OtlpHttpTraceExporter({
      url: endpoint.url,
      headers: { ...options.headers },
      timeoutMillis: options.timeoutMs,
      concurrencyLimit: EXPORT_CONCURRENCY,
    });
  }
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(options.headers)) metadata.set(key.toLowerCase(), value);
  return new OtlpGrpcTraceExporter({ url: endpoint.url, metadata, timeoutMillis: options.timeoutMs, concurrencyLimit: EXPORT_CONCURRENCY });
}

/** Scheme and host only: an endpoint URL may carry credentials, which stay out of the log. */
export function endpointForLog(endpoint: OtlpEndpoint): string {
  const url = new URL(endpoint.url);
  if (endpoint.protocol === 'http') return `${url.protocol}//${url.host}`;
  // URL drops a scheme's default port, which a gRPC endpoint does not have.
  const tls = url.protocol === 'https:';
  return `${tls ? 'grpcs' : 'grpc'}://${url.hostname}:${url.port || (tls ? 443 : 80)}`;
}

export interface ExportReporterOptions {
  log?: Logger;
  clock: Clock;
  /** As `endpointForLog` gives it. */
  endpoint: string;
  intervalMs?: number;
}

/**
 * Logs the first failure at once, then at most one line per interval with
 * the count of failures since the last line, and one line when exports
 * succeed again.
 */
export function createExportReporter(options: ExportReporterOptions): (result: ExportResult) => void {
  const interval = options.intervalMs ?? EXPORT_FAILURE_LOG_INTERVAL_MS;
  let lastLine = -Infinity;
  let unreported = 0;
  let failing = false;
  return (result) => {
    if (result.code === core.ExportResultCode.SUCCESS) {
      if (failing) options.log?.info({ endpoint: options.endpoint, unreported_failures: unreported }, 'trace export recovered');
      failing = false;
      unreported = 0;
      return;
    }
    failing = true;
    const now = options.clock.now();
    if (now - lastLine < interval) {
      unreported += 1;
      return;
    }
    lastLine = now;
    options.log?.warn(
      // The reason, not the error: its stack is the exporter's internals, the same every time.
      { reason: result.error?.message ?? 'unknown', endpoint: options.endpoint, failures_since_last_report: unreported + 1, report_interval_ms: interval },
      'trace export failed; the spans of that batch are dropped',
    );
    unreported = 0;
  };
}

/** `inner`, with every export result also handed to `report`. */
export function reportingExporter(inner: SpanExporter, report: (result: ExportResult) => void): SpanExporter {
  return {
    export(spans, done) {
      inner.export(spans, (result) => {
        report(result);
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}
