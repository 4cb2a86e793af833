/**
 * OTLP `ExportTraceServiceRequest`s made in place around chunks of spans
 * that are already protobuf (span-record.ts). A chunk keeps free space in
 * front of its spans; when it is posted, the request's framing (the
 * resource, the instrumentation scope and the lengths around the spans) is
 * written into that space, right before the first span, so the chunk
 * becomes a whole request without a copy. The same bytes go over OTLP/HTTP
 * (`application/x-protobuf`) and OTLP/gRPC.
 *
 * Requests concatenate: protobuf appends the elements of a repeated field
 * that occurs twice, so two requests one after the other are one request
 * with two `resource_spans` entries. The export thread joins small chunks
 * that way.
 *
 * Request layout (opentelemetry-proto): resource_spans 1 → (resource 1 →
 * attributes 1; scope_spans 2 → (scope 1 → name 1, version 2; spans 2)).
 */
import type { Attributes } from '@opentelemetry/api';
import { ProtoWriter, varintSize, WIRE } from './proto-writer.js';
import { writeAttributeFields } from './span-record.js';

export interface EncodingScope {
  readonly resourceAttributes: Attributes;
  readonly scope: { readonly name: string; readonly version?: string };
}

/** The framing of a request around a chunk's spans, for one resource and scope. */
export interface RequestFrame {
  /** The most bytes the framing takes: the space a chunk keeps in front of its spans. */
  readonly maxBytes: number;
  /**
   * Writes the framing into `bytes` so that it ends at `spansStart`, where
   * the spans (up to `spansEnd`) begin; returns where the request starts.
   */
  write(bytes: Uint8Array, spansStart: number, spansEnd: number): number;
}

/** A length below 2^35 takes at most five varint bytes. */
const MAX_LENGTH_BYTES = 5;

/** The framing for one resource and scope; their bytes are made once. */
export function createRequestFrame(encoding: EncodingScope): RequestFrame {
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

  return {
    maxBytes: 1 + MAX_LENGTH_BYTES + resourceField.length + 1 + MAX_LENGTH_BYTES + scopeField.length,
    write(bytes, spansStart, spansEnd) {
      const scopeSpans = scopeField.length + (spansEnd - spansStart);
      const resourceSpans = resourceField.length + 1 + varintSize(scopeSpans) + scopeSpans;
      const framing = 1 + varintSize(resourceSpans) + resourceField.length + 1 + varintSize(scopeSpans) + scopeField.length;
      const start = spansStart - framing;
      if (start < 0) throw new RangeError(`the request framing needs ${-start} bytes more in front of the spans`);
      const w = ProtoWriter.over(bytes);
      w.pos = start;
      w.key(1, WIRE.bytes);
      w.varint(resourceSpans);
      w.raw(resourceField);
      w.key(2, WIRE.bytes);
      w.varint(scopeSpans);
      w.raw(scopeField);
      return start;
    },
  };
}

/** One request holding every request of `requests` (see the header); a single one is returned as it is. */
export function joinRequests(requests: readonly Uint8Array[]): Uint8Array {
  if (requests.length === 1) return requests[0]!;
  let size = 0;
  for (const request of requests) size += request.length;
  const joined = new Uint8Array(size);
  let pos = 0;
  for (const request of requests) {
    joined.set(request, pos);
    pos += request.length;
  }
  return joined;
}
