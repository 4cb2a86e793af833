/**
 * OpenTelemetry's OTLP exporters for `observability.otlp_endpoint`, spans
 * and metrics alike: protobuf over HTTP (`application/x-protobuf`) for
 * http(s)://, protobuf over gRPC for grpc(s)://. The exporters own the
 * transports, timeouts and retries.
 */
import { Metadata } from '@grpc/grpc-js';
import { OTLPMetricExporter as OtlpGrpcMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as OtlpProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as OtlpGrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as OtlpProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { OtlpEndpoint } from './otlp-endpoint.js';

/**
 * Export requests in flight at once; past it an export fails at once and its
 * spans are dropped (and reported), rather than piling up sockets behind a
 * slow collector.
 */
export const EXPORT_CONCURRENCY = 4;

export interface OtlpExporterOptions {
  timeoutMs: number;
  /** `observability.otlp_headers`: HTTP headers, or gRPC metadata for a grpc endpoint. */
  headers: Readonly<Record<string, string>>;
}

/** `otlp_headers` as the gRPC metadata of an OTLP/gRPC export (metadata keys are lower case). */
function grpcMetadata(headers: Readonly<Record<string, string>>): Metadata {
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(headers)) metadata.set(name.toLowerCase(), value);
  return metadata;
}

export function createOtlpTraceExporter(endpoint: OtlpEndpoint, options: OtlpExporterOptions): SpanExporter {
  const common = { url: endpoint.url, timeoutMillis: options.timeoutMs, concurrencyLimit: EXPORT_CONCURRENCY };
  if (endpoint.protocol === 'http') return new OtlpProtoTraceExporter({ ...common, headers: { ...options.headers } });
  return new OtlpGrpcTraceExporter({ ...common, metadata: grpcMetadata(options.headers) });
}

export function createOtlpMetricExporter(endpoint: OtlpEndpoint, options: OtlpExporterOptions): PushMetricExporter {
  const common = { url: endpoint.url, timeoutMillis: options.timeoutMs, concurrencyLimit: EXPORT_CONCURRENCY };
  if (endpoint.protocol === 'http') return new OtlpProtoMetricExporter({ ...common, headers: { ...options.headers } });
  return new OtlpGrpcMetricExporter({ ...common, metadata: grpcMetadata(options.headers) });
}

/** Scheme and host only: an endpoint URL may carry credentials, which stay out of the log. */
export function endpointForLog(endpoint: OtlpEndpoint): string {
  const url = new URL(endpoint.url);
  if (endpoint.protocol === 'http') return `${url.protocol}//${url.host}`;
  // URL drops a scheme's default port, which a gRPC endpoint does not have.
  const tls = url.protocol === 'https:';
  return `${tls ? 'grpcs' : 'grpc'}://${url.hostname}:${url.port || (tls ? 443 : 80)}`;
}
