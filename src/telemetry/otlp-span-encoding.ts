/**
 * OTLP `ExportTraceServiceRequest`s written straight from span batches
 * (span-record.ts): JSON for OTLP/HTTP, protobuf for OTLP/gRPC. The
 * OpenTelemetry exporters take these as their serializer, so their
 * transport (timeouts, retries, concurrency, headers, TLS) is used as it is.
 *
 * OpenTelemetry's own serializers want one `ReadableSpan` object per span
 * and build an intermediate OTLP object tree before encoding: 5–7 µs a span
 * here, which at 100k spans a second took a whole core away from the
 * agents. Writing from the flat batch costs a fraction of that. The output
 * is the same request, field for field: test/telemetry/otlp-span-encoding.test.ts
 * decodes both and compares them.
 *
 * Field numbers and JSON names are those of opentelemetry-proto
 * (`opentelemetry/proto/trace/v1/trace.proto`, `common/v1/common.proto`);
 * ids are hex in JSON and bytes in protobuf, times are nanoseconds since
 * the epoch (a decimal string in JSON, fixed64 in protobuf).
 */
import type { Attributes } from '@opentelemetry/api';
import protobuf from 'protobufjs';
import { BatchCursor as Cursor, type SpanBatch } from './span-record.js';

/** What one export request carries: batches as the main thread posted them, and their span count. */
export interface SpanBatches {
  readonly batches: readonly SpanBatch[];
  readonly spans: number;
}

export interface EncodingScope {
  readonly resourceAttributes: Attributes;
  readonly scope: { readonly name: string; readonly version?: string };
}

// OTLP span flags: the W3C trace flags in the low byte, then whether the parent's remoteness is known and whether it was remote.
const FLAGS_HAS_IS_REMOTE = 0x100;
const FLAGS_IS_REMOTE = 0x200;

function spanFlags(traceFlags: number, isRemote: boolean): number {
  return (traceFlags & 0xff) | FLAGS_HAS_IS_REMOTE | (isRemote ? FLAGS_IS_REMOTE : 0);
}

/** Milliseconds since the epoch (a batch's time) as whole seconds and nanoseconds, as the SDK's hrtime has them. */
function split(ms: number): [number, number] {
  const seconds = Math.floor(ms / 1e3);
  return [seconds, Math.round((ms - seconds * 1e3) * 1e6)];
}

function nanosString(ms: number): string {
  const [seconds, nanos] = split(ms);
  return seconds === 0 ? String(nanos) : `${seconds}${String(nanos).padStart(9, '0')}`;
}

// ---------------------------------------------------------------- JSON

/** Keys and names repeat in every span; their JSON forms are kept (bounded: cleared when full). */
const quoted = new Map<string, string>();
const QUOTED_LIMIT = 4096;

function quote(text: string): string {
  let json = quoted.get(text);
  if (json === undefined) {
    if (quoted.size >= QUOTED_LIMIT) quoted.clear();
    json = jsonString(text);
    quoted.set(text, json);
  }
  return json;
}

/** Characters a JSON string cannot hold as they are, and everything past ASCII. */
// eslint-disable-next-line no-control-regex -- JSON strings must escape U+0000 to U+001F.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f-\uffff]/;
const NON_ASCII = /[\u007f-\uffff]/g;

/**
 * A JSON string literal in ASCII: ids, names and types are plain ASCII and
 * skip `JSON.stringify`; anything else is escaped, past ASCII as `\uXXXX`
 * (surrogate pairs as two escapes, which JSON readers join). An all-ASCII
 * request is copied into bytes several times faster than UTF-8 is encoded.
 */
function jsonString(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
  return JSON.stringify(text).replace(NON_ASCII, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function jsonAnyValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return `{"stringValue":${jsonString(value)}}`;
    case 'number':
      return Number.isInteger(value) ? `{"intValue":${value}}` : `{"doubleValue":${JSON.stringify(value)}}`;
    case 'boolean':
      return `{"boolValue":${value}}`;
    default:
      return Array.isArray(value) ? `{"arrayValue":{"values":[${value.map(jsonAnyValue).join(',')}]}}` : '{}';
  }
}

function jsonKeyValues(attributes: Attributes): string {
  let out = '';
  for (const name in attributes) {
    const value = attributes[name];
    if (value !== undefined) out += `${out === '' ? '' : ','}{"key":${quote(name)},"value":${jsonAnyValue(value)}}`;
  }
  return `[${out}]`;
}

/** `(droppedCount, count, (key, value)*)` of the cursor as `"attributes":[...],"droppedAttributesCount":n`. */
function jsonAttributes(cursor: Cursor): string {
  const dropped = cursor.number();
  const count = cursor.number();
  let out = '"attributes":[';
  for (let i = 0; i < count; i++) {
    const name = cursor.string();
    out += `${i === 0 ? '' : ','}{"key":${quote(name)},"value":${jsonAnyValue(cursor.value())}}`;
  }
  return `${out}],"droppedAttributesCount":${dropped}`;
}

function jsonSpan(cursor: Cursor): string {
  const { name, kind, traceId, spanId, traceFlags, traceState, parentSpanId, parentIsRemote, startMs, endMs, statusCode, statusMessage } = cursor.head();
  const start = nanosString(startMs);
  const end = nanosString(endMs);
  let out =
    `{"traceId":"${traceId}","spanId":"${spanId}"` +
    (parentSpanId === '' ? '' : `,"parentSpanId":"${parentSpanId}"`) +
    (traceState === '' ? '' : `,"traceState":${jsonString(traceState)}`) +
    `,"name":${quote(name)},"kind":${kind + 1},"startTimeUnixNano":"${start}","endTimeUnixNano":"${end}",` +
    jsonAttributes(cursor);
  const droppedEvents = cursor.number();
  out += ',"events":[';
  for (let i = cursor.number(), first = true; i > 0; i--, first = false) {
    const eventName = cursor.string();
    const time = nanosString(cursor.number());
    out += `${first ? '' : ','}{${jsonAttributes(cursor)},"name":${quote(eventName)},"timeUnixNano":"${time}"}`;
  }
  out +=
    `],"droppedEventsCount":${droppedEvents}` +
    `,"status":{"code":${statusCode}${statusMessage === '' ? '' : `,"message":${jsonString(statusMessage)}`}}`;
  const droppedLinks = cursor.number();
  out += ',"links":[';
  for (let i = cursor.number(), first = true; i > 0; i--, first = false) {
    const link = cursor.linkHead();
    out +=
      `${first ? '' : ','}{${jsonAttributes(cursor)},"spanId":"${link.spanId}","traceId":"${link.traceId}"` +
      (link.traceState === '' ? '' : `,"traceState":${jsonString(link.traceState)}`) +
      `,"flags":${spanFlags(link.traceFlags, link.isRemote)}}`;
  }
  return `${out}],"droppedLinksCount":${droppedLinks},"flags":${spanFlags(traceFlags, parentIsRemote)}}`;
}

/** The request as OTLP/JSON (protobuf JSON mapping, as OTLP/HTTP with `application/json` wants it). */
export function encodeJson(request: SpanBatches, encoding: EncodingScope): Uint8Array {
  const spans: string[] = [];
  for (const batch of request.batches) {
    const cursor = new Cursor(batch);
    while (!cursor.done) spans.push(jsonSpan(cursor));
  }
  const { name, version } = encoding.scope;
  const scope = `{"name":${jsonString(name)}${version === undefined ? '' : `,"version":${jsonString(version)}`}}`;
  const resource = `{"attributes":${jsonKeyValues(encoding.resourceAttributes)},"droppedAttributesCount":0}`;
  // Every string above is escaped to ASCII, so the bytes are the characters.
  return Buffer.from(`{"resourceSpans":[{"resource":${resource},"scopeSpans":[{"scope":${scope},"spans":[${spans.join(',')}]}]}]}`, 'latin1');
}

// ---------------------------------------------------------------- protobuf

type Writer = protobuf.Writer;

/** Field key: number and wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
const key = (field: number, wire: 0 | 1 | 2 | 5): number => (field << 3) | wire;

function writeFixed64Nanos(writer: Writer, field: number, ms: number): void {
  const [seconds, nanos] = split(ms);
  const total = BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
  writer.uint32(key(field, 1)).fixed64({ low: Number(total & 0xffffffffn), high: Number(total >> 32n) } as unknown as number);
}

function writeHex(writer: Writer, field: number, hex: string): void {
  writer.uint32(key(field, 2)).bytes(Buffer.from(hex, 'hex'));
}

/** AnyValue: string 1, bool 2, int 3, double 4, array 5 (ArrayValue.values 1). */
function writeAnyValue(writer: Writer, value: unknown): void {
  switch (typeof value) {
    case 'string':
      writer.uint32(key(1, 2)).string(value);
      return;
    case 'boolean':
      writer.uint32(key(2, 0)).bool(value);
      return;
    case 'number':
      if (Number.isInteger(value)) writer.uint32(key(3, 0)).int64(value);
      else writer.uint32(key(4, 1)).double(value);
      return;
    default:
      if (!Array.isArray(value)) return;
      writer.uint32(key(5, 2)).fork();
      for (const item of value) {
        writer.uint32(key(1, 2)).fork();
        writeAnyValue(writer, item);
        writer.ldelim();
      }
      writer.ldelim();
  }
}

/** A KeyValue (key 1, value 2) as field `field` of the enclosing message. */
function writeKeyValue(writer: Writer, field: number, name: string, value: unknown): void {
  writer.uint32(key(field, 2)).fork().uint32(key(1, 2)).string(name).uint32(key(2, 2)).fork();
  writeAnyValue(writer, value);
  writer.ldelim().ldelim();
}

/** Attributes as repeated field `field`, and their dropped count as field `droppedField` when not zero. */
function writeAttributes(writer: Writer, cursor: Cursor, field: number, droppedField: number): void {
  const dropped = cursor.number();
  for (let count = cursor.number(); count > 0; count--) writeKeyValue(writer, field, cursor.string(), cursor.value());
  if (dropped !== 0) writer.uint32(key(droppedField, 0)).uint32(dropped);
}

/**
 * Span: trace_id 1, span_id 2, trace_state 3, parent_span_id 4, name 5,
 * kind 6, start 7, end 8, attributes 9/10, events 11/12, links 13/14,
 * status 15 (message 2, code 3), flags 16.
 */
function writeSpan(writer: Writer, cursor: Cursor): void {
  const { name, kind, traceId, spanId, traceFlags, traceState, parentSpanId, parentIsRemote, startMs, endMs, statusCode, statusMessage } = cursor.head();
  writer.uint32(key(2, 2)).fork();
  writeHex(writer, 1, traceId);
  writeHex(writer, 2, spanId);
  if (traceState !== '') writer.uint32(key(3, 2)).string(traceState);
  if (parentSpanId !== '') writeHex(writer, 4, parentSpanId);
  writer.uint32(key(5, 2)).string(name);
  writer.uint32(key(6, 0)).int32(kind + 1);
  writeFixed64Nanos(writer, 7, startMs);
  writeFixed64Nanos(writer, 8, endMs);
  writeAttributes(writer, cursor, 9, 10);
  const droppedEvents = cursor.number();
  for (let i = cursor.number(); i > 0; i--) {
    // Event: time 1, name 2, attributes 3/4.
    const eventName = cursor.string();
    const timeMs = cursor.number();
    writer.uint32(key(11, 2)).fork();
    writeFixed64Nanos(writer, 1, timeMs);
    writer.uint32(key(2, 2)).string(eventName);
    writeAttributes(writer, cursor, 3, 4);
    writer.ldelim();
  }
  if (droppedEvents !== 0) writer.uint32(key(12, 0)).uint32(droppedEvents);
  const droppedLinks = cursor.number();
  for (let i = cursor.number(); i > 0; i--) {
    // Link: trace_id 1, span_id 2, trace_state 3, attributes 4/5, flags 6.
    const link = cursor.linkHead();
    writer.uint32(key(13, 2)).fork();
    writeHex(writer, 1, link.traceId);
    writeHex(writer, 2, link.spanId);
    if (link.traceState !== '') writer.uint32(key(3, 2)).string(link.traceState);
    writeAttributes(writer, cursor, 4, 5);
    writer.uint32(key(6, 5)).fixed32(spanFlags(link.traceFlags, link.isRemote));
    writer.ldelim();
  }
  if (droppedLinks !== 0) writer.uint32(key(14, 0)).uint32(droppedLinks);
  writer.uint32(key(15, 2)).fork();
  if (statusMessage !== '') writer.uint32(key(2, 2)).string(statusMessage);
  if (statusCode !== 0) writer.uint32(key(3, 0)).int32(statusCode);
  writer.ldelim();
  writer.uint32(key(16, 5)).fixed32(spanFlags(traceFlags, parentIsRemote));
  writer.ldelim();
}

/**
 * The request as protobuf: resource_spans 1 → (resource 1 → attributes 1;
 * scope_spans 2 → (scope 1 → name 1, version 2; spans 2)).
 */
export function encodeProtobuf(request: SpanBatches, encoding: EncodingScope): Uint8Array {
  const writer = protobuf.Writer.create();
  writer.uint32(key(1, 2)).fork();
  writer.uint32(key(1, 2)).fork();
  for (const name in encoding.resourceAttributes) {
    const value = encoding.resourceAttributes[name];
    if (value !== undefined) writeKeyValue(writer, 1, name, value);
  }
  writer.ldelim();
  writer.uint32(key(2, 2)).fork();
  writer.uint32(key(1, 2)).fork().uint32(key(1, 2)).string(encoding.scope.name);
  if (encoding.scope.version !== undefined) writer.uint32(key(2, 2)).string(encoding.scope.version);
  writer.ldelim();
  for (const batch of request.batches) {
    const cursor = new Cursor(batch);
    while (!cursor.done) writeSpan(writer, cursor);
  }
  writer.ldelim().ldelim();
  return writer.finish();
}
