/**
 * OTLP `ExportTraceServiceRequest`s around chunks of spans that are already
 * protobuf (span-record.ts): the request only adds the resource and the
 * instrumentation scope around them, then the chunks are copied in as they
 * are. The same bytes go over OTLP/HTTP (`application/x-protobuf`) and
 * OTLP/gRPC. The OpenTelemetry exporters take this as their serializer, so
 * their transports (timeouts, retries, concurrency, headers, TLS) are used
 * as they are.
 *
 * Request layout (opentelemetry-proto): resource_spans 1 → (resource 1 →
 * attributes 1; scope_spans 2 → (scope 1 → name 1, version 2; spans 2)).
 */
import type { Attributes } from '@opentelemetry/api';
import { ProtoWriter, varintSize, WIRE } from './proto-writer.js';
import { writeAttributeFields } from './span-record.js';

/** What one export request carries: chunks of encoded spans, and how many spans they hold. */
export interface SpanChunks {
  readonly chunks: readonly Uint8Array[];
  readonly spans: number;
}

export interface EncodingScope {
  readonly resourceAttributes: Attributes;
  readonly scope: { readonly name: string; readonly version?: string };
}

const LENGTH_DELIMITED = (field: number): number => field * 8 + WIRE.bytes;

/** Encodes requests for one resource and scope; their bytes are made once. */
export function createRequestEncoder(encoding: EncodingScope): (request: SpanChunks) => Uint8Array {
  const resource = new ProtoWriter(256);
  const resourceAt = resource.begin(1);
  writeAttributeFields(resource, 1, encoding.resourceAttributes);
  resource.end(resourceAt);
  const resourceField = resource.finish();
  const scope = new ProtoWriter(64);
  const scopeAt = scope.begin(1);
  scope.stringField(1, encoding.scope.name);
  if (encoding.scope.version !== undefined) scope.stringField(2, encoding.scope.version);
  scope.end(scopeAt);
  const scopeField = scope.finish();

  return (request) => {
    let spanBytes = 0;
    for (const chunk of request.chunks) spanBytes += chunk.length;
    const scopeSpans = scopeField.length + spanBytes;
    const resourceSpans = resourceField.length + 1 + varintSize(scopeSpans) + scopeSpans;
    const out = new ProtoWriter(1 + varintSize(resourceSpans) + resourceSpans);
    out.key(1, WIRE.bytes);
    out.varint(resourceSpans);
    out.bytes.set(resourceField, out.pos);
    out.pos += resourceField.length;
    out.varint(LENGTH_DELIMITED(2));
    out.varint(scopeSpans);
    out.bytes.set(scopeField, out.pos);
    out.pos += scopeField.length;
    for (const chunk of request.chunks) {
      out.bytes.set(chunk, out.pos);
      out.pos += chunk.length;
    }
    return out.bytes;
  };
}
