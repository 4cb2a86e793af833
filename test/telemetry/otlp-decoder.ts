/**
 * Decodes OTLP export requests as a collector does: protobufjs over the
 * opentelemetry-proto definitions themselves (otlp-proto/, v1.9.0), or the
 * OTLP/JSON body. Either way the result has the OTLP/JSON shape: ids in hex,
 * 64-bit integers as strings, camelCase names.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const PROTO_DIR = fileURLToPath(new URL('./otlp-proto/', import.meta.url));

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => join(PROTO_DIR, target);
root.loadSync(['opentelemetry/proto/collector/trace/v1/trace_service.proto', 'opentelemetry/proto/collector/metrics/v1/metrics_service.proto']);

const TRACE_REQUEST = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const METRICS_REQUEST = root.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest');

export interface OtlpKeyValue {
  key: string;
  value?: { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number };
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano?: string;
  endTimeUnixNano?: string;
  attributes?: OtlpKeyValue[];
  events?: { name: string }[];
  status?: { code?: number; message?: string };
}

export interface OtlpTraceRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: { scope?: { name?: string; version?: string }; spans?: OtlpSpan[] }[];
  }[];
}

export interface OtlpNumberPoint {
  attributes?: OtlpKeyValue[];
  asDouble?: number;
  asInt?: string | number;
}

export interface OtlpHistogramPoint {
  attributes?: OtlpKeyValue[];
  count?: string | number;
  sum?: number;
  bucketCounts?: (string | number)[];
  explicitBounds?: number[];
}

export interface OtlpMetric {
  name: string;
  description?: string;
  unit?: string;
  sum?: { aggregationTemporality?: number; isMonotonic?: boolean; dataPoints?: OtlpNumberPoint[] };
  gauge?: { dataPoints?: OtlpNumberPoint[] };
  histogram?: { aggregationTemporality?: number; dataPoints?: OtlpHistogramPoint[] };
}

export interface OtlpMetricsRequest {
  resourceMetrics?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeMetrics?: { scope?: { name?: string; version?: string }; metrics?: OtlpMetric[] }[];
  }[];
}

const isJson = (contentType: string): boolean => contentType.startsWith('application/json');
const hex = (value: unknown): string => (value instanceof Uint8Array ? Buffer.from(value).toString('hex') : typeof value === 'string' ? value : '');

/** An ExportTraceServiceRequest, protobuf (HTTP `application/x-protobuf`, gRPC) or OTLP/JSON. */
export function decodeTraceRequest(body: Uint8Array, contentType = 'application/x-protobuf'): OtlpTraceRequest {
  if (isJson(contentType)) return JSON.parse(Buffer.from(body).toString('utf8')) as OtlpTraceRequest;
  const request = TRACE_REQUEST.toObject(TRACE_REQUEST.decode(body), { longs: String, defaults: false }) as OtlpTraceRequest;
  for (const rs of request.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        span.traceId = hex(span.traceId);
        span.spanId = hex(span.spanId);
        span.parentSpanId = hex(span.parentSpanId);
      }
    }
  }
  return request;
}

/** An ExportMetricsServiceRequest, protobuf or OTLP/JSON. */
export function decodeMetricsRequest(body: Uint8Array, contentType = 'application/x-protobuf'): OtlpMetricsRequest {
  if (isJson(contentType)) return JSON.parse(Buffer.from(body).toString('utf8')) as OtlpMetricsRequest;
  return METRICS_REQUEST.toObject(METRICS_REQUEST.decode(body), { longs: String, defaults: false }) as OtlpMetricsRequest;
}

/** Attributes as a plain object; integers as numbers. */
export function attributesOf(list: readonly OtlpKeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    if (value === undefined) continue;
    out[key] = value.stringValue ?? value.boolValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.doubleValue);
  }
  return out;
}
