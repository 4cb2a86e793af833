/**
 * The OTLP span exporter for `observability.otlp_endpoint`, and the
 * reporter that makes an unreachable or failing collector cost one log line
 * per interval, never a line per batch and never an error in an API call
 * (spans are exported from the export thread, off the request path).
 */
import { Metadata } from '@grpc/grpc-js';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { convertLegacyOtlpGrpcOptions, createOtlpGrpcExportDelegate } from '@opentelemetry/otlp-grpc-exporter-base';
import { ProtobufTraceSerializer, type IExporterMetricsHelper, type ISerializer } from '@opentelemetry/otlp-transformer';
import { core, type tracing } from '@opentelemetry/sdk-node';
import type { Clock } from '../../supervisors/index.js';
import type { Logger } from './logger.js';
import type { OtlpEndpoint } from './otlp-endpoint.js';
import { joinRequests } from './otlp-span-encoding.js';

export type SpanExporter = tracing.SpanExporter;
type ExportResult = Parameters<Parameters<SpanExporter['export']>[1]>[0];

/** A failing collector is reported at most once per this interval; the line counts the failures in between. */
export const EXPORT_FAILURE_LOG_INTERVAL_MS = 60_000;
/** Export requests in flight at once; past it an export fails at once and its spans are dropped, instead of piling up sockets. */
export const EXPORT_CONCURRENCY = 4;
/** The gRPC method of OTLP trace export. */
const GRPC_TRACE_EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

export interface OtlpExporterOptions {
  timeoutMs: number;
  /** `observability.otlp_headers`: HTTP headers, or gRPC metadata for a grpc endpoint. */
  headers: Readonly<Record<string, string>>;
}

/** `otlp_headers` as the gRPC metadata of an OTLP/gRPC export (metadata keys are lower case). */
export function grpcMetadata(headers: Readonly<Record<string, string>>): Metadata {
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(headers)) metadata.set(name.toLowerCase(), value);
  return metadata;
}

/** What one export request carries: chunks that are each a whole request (otlp-span-encoding.ts), and how many spans they hold. */
export interface SpanChunks {
  readonly chunks: readonly Uint8Array[];
  readonly spans: number;
}

/** Exports chunks of encoded spans; the interface of OpenTelemetry's exporters, over our request type. */
export interface SpanChunkExporter {
  export(request: SpanChunks, done: (result: ExportResult) => void): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

const COUNT_SPANS: IExporterMetricsHelper<SpanChunks> = { name: 'span', countItems: (request) => request.spans };

/**
 * OpenTelemetry's OTLP exporter (its HTTP or gRPC transport, timeouts,
 * retries and concurrency limit) sending chunks of encoded spans that are
 * already whole requests (otlp-span-encoding.ts): protobuf over both, as
 * OTLP/HTTP's `application/x-protobuf`. A single chunk is sent as it is;
 * several are joined. Responses are read by OpenTelemetry's own serializer.
 */
export function createSpanChunkExporter(endpoint: OtlpEndpoint, options: OtlpExporterOptions): SpanChunkExporter {
  const serializer: ISerializer<SpanChunks, unknown> = {
    serializeRequest: (request) => joinRequests(request.chunks),
    deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
  };
  if (endpoint.protocol === 'http') {
    const config = { url: endpoint.url, headers: { ...options.headers }, timeoutMillis: options.timeoutMs, concurrencyLimit: EXPORT_CONCURRENCY };
    const http = convertLegacyHttpOptions(config, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' });
    return new OTLPExporterBase(createOtlpHttpExportDelegate(http, serializer, 'otlp_http_span_exporter', COUNT_SPANS, undefined));
  }
  const grpc = convertLegacyOtlpGrpcOptions({ url: endpoint.url, metadata: grpcMetadata(options.headers), timeoutMillis: options.timeoutMs, concurrencyLimit: EXPORT_CONCURRENCY }, 'TRACES');
  return new OTLPExporterBase(createOtlpGrpcExportDelegate(grpc, serializer, 'otlp_grpc_span_exporter', COUNT_SPANS, undefined, 'TraceExportService', GRPC_TRACE_EXPORT));
}

/** Scheme and host only: an endpoint URL may carry credentials, which stay out of the log. */
export function endpointForLog(endpoint: OtlpEndpoint): string {
  const url = new URL(endpoint.url);
  if (endpoint.protocol === 'http') return `${url.protocol}//${url.host}`;
  // URL drops a scheme's default port, which a gRPC endpoint does not have.
  const tls = url.protocol === 'https:';
  return `${tls ? 'grpcs' : 'grpc'}://${url.hostname}:${url.port || (tls ? 443 : 80)}`;
}

/** The texts of a reporter's two lines, which name the signal and what its failure costs. */
export interface ExportReportMessages {
  failed: string;
  recovered: string;
}

export const TRACE_EXPORT_MESSAGES: ExportReportMessages = {
  failed: 'trace export failed; the spans of that batch are dropped',
  recovered: 'trace export recovered',
};

export interface ExportReporterOptions {
  log?: Logger;
  clock: Clock;
  /** As `endpointForLog` gives it. */
  endpoint: string;
  intervalMs?: number;
  /** Default `TRACE_EXPORT_MESSAGES`. */
  messages?: ExportReportMessages;
}

/**
 * Logs the first failure at once, then at most one line per interval with
 * the count of failures since the last line, and one line when exports
 * succeed again.
 */
export function createExportReporter(options: ExportReporterOptions): (result: ExportResult) => void {
  const interval = options.intervalMs ?? EXPORT_FAILURE_LOG_INTERVAL_MS;
  const messages = options.messages ?? TRACE_EXPORT_MESSAGES;
  let lastLine = -Infinity;
  let unreported = 0;
  let failing = false;
  return (result) => {
    if (result.code === core.ExportResultCode.SUCCESS) {
      if (failing) options.log?.info({ endpoint: options.endpoint, unreported_failures: unreported }, messages.recovered);
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
      messages.failed,
    );
    unreported = 0;
  };
}
