/**
 * Finished spans as OTLP protobuf, written on the main thread straight into
 * a chunk of bytes that is then handed to the export thread without copying
 * (span-export.ts). Each span is one `spans` field (2) of an OTLP
 * `ScopeSpans`, so a chunk of spans is already the body of the request the
 * export thread sends: it only adds the resource and scope around it
 * (otlp-span-encoding.ts).
 *
 * Writing the bytes directly costs about half a microsecond a span here;
 * OpenTelemetry's SDK objects, a copy to the other thread and its
 * serializer cost about ten, and the other thread's work alone slowed the
 * agents (docs/observability.md, "Export and failure").
 *
 * Field numbers are in otlp-trace-fields.ts; span-record-reader.ts reads a
 * chunk back into the SDK's `ReadableSpan`s, for exporters handed in by
 * tests and benchmarks.
 */
import type { Attributes, AttributeValue, Link, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { tracing } from '@opentelemetry/sdk-node';
import { ANY, EVENT, LINK, SCOPE_SPANS_SPAN_FIELD, SPAN, spanFlags, STATUS } from './otlp-trace-fields.js';
import { ProtoWriter, utf8Size, varintSize, WIRE } from './proto-writer.js';

type HrTime = [number, number];
type ReadableSpan = tracing.ReadableSpan;

/** The fields of a span besides its attributes, events and links. */
export interface SpanHead {
  name: string;
  kind: SpanKind;
  traceId: string;
  spanId: string;
  traceFlags: number;
  /** Serialized W3C `tracestate`, or `''`. */
  traceState: string;
  /** `''` for a root span. */
  parentSpanId: string;
  parentIsRemote: boolean;
  /** Milliseconds since the epoch (as `performance.timeOrigin + performance.now()` gives them), or the SDK's exact hrtime. */
  startTime: SpanTime;
  endTime: SpanTime;
  statusCode: SpanStatusCode;
  statusMessage: string;
}

/** A time of a span: milliseconds since the epoch, or whole seconds and nanoseconds. */
export type SpanTime = number | HrTime;

/** An event of a span. */
export interface RecordedEvent {
  name: string;
  time: SpanTime;
  attributes: Attributes;
  droppedAttributesCount?: number;
}

interface DroppedCounts {
  attributes: number;
  events: number;
  links: number;
}

const NONE_DROPPED: DroppedCounts = { attributes: 0, events: 0, links: 0 };

export function hrTimeToMs(time: HrTime): number {
  return time[0] * 1e3 + time[1] / 1e6;
}

/** Whole seconds and nanoseconds of a time in milliseconds since the epoch. */
export function msToHrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1e3);
  const nanos = Math.round((ms - seconds * 1e3) * 1e6);
  return nanos >= 1e9 ? [seconds + 1, nanos - 1e9] : [seconds, nanos];
}

function writeTime(w: ProtoWriter, field: number, time: SpanTime): void {
  w.key(field, WIRE.fixed64);
  if (typeof time === 'number') w.fixed64Ms(time);
  else w.fixed64Time(time[0], time[1]);
}

/** Size of an AnyValue holding `value`, or -1 when it has to be framed (arrays, non-ASCII text is sized exactly). */
function anyValueSize(value: unknown): number {
  switch (typeof value) {
    case 'string': {
      const size = utf8Size(value);
      return 1 + varintSize(size) + size;
    }
    case 'boolean':
      return 2;
    case 'number':
      return Number.isInteger(value) ? 1 + (value >= 0 ? varintSize(value) : 10) : 9;
    default:
      return Array.isArray(value) ? -1 : 0;
  }
}

/** The fields of an AnyValue holding `value`; `stringSize` is the UTF-8 size of a string value when the caller has it. */
function writeAnyValueBody(w: ProtoWriter, value: unknown, stringSize = -1): void {
  switch (typeof value) {
    case 'string':
      if (stringSize < 0) w.stringField(ANY.string, value);
      else {
        w.key(ANY.string, WIRE.bytes);
        w.sizedString(value, stringSize);
      }
      return;
    case 'boolean':
      w.key(ANY.bool, WIRE.varint);
      w.varint(value ? 1 : 0);
      return;
    case 'number':
      if (Number.isInteger(value)) {
        w.key(ANY.int, WIRE.varint);
        w.int64(value);
      } else {
        w.key(ANY.double, WIRE.fixed64);
        w.double(value);
      }
      return;
    default:
      if (!Array.isArray(value)) return;
      {
        const array = w.begin(ANY.array);
        for (const item of value as unknown[]) {
          const element = w.begin(1);
          writeAnyValueBody(w, item);
          w.end(element);
        }
        w.end(array);
      }
  }
}

/** The `key` field (1) of a KeyValue, encoded once per attribute key: keys come from a small fixed set. */
const encodedKeys = new Map<string, Uint8Array>();
const ENCODED_KEYS_LIMIT = 1024;

function encodedKey(key: string): Uint8Array {
  let bytes = encodedKeys.get(key);
  if (bytes === undefined) {
    if (encodedKeys.size >= ENCODED_KEYS_LIMIT) encodedKeys.clear();
    const writer = new ProtoWriter(key.length + 8);
    writer.stringField(1, key);
    bytes = writer.finish();
    encodedKeys.set(key, bytes);
  }
  return bytes;
}

/**
 * A KeyValue (key 1, value 2) with a string value, the message path's
 * case: written in one pass assuming ASCII text (ids, names, types) short
 * enough that every length takes one byte; false, with nothing written,
 * when the value is not such text.
 */
function writeAsciiKeyValue(w: ProtoWriter, field: number, key: string, value: string): boolean {
  const keyBytes = encodedKey(key);
  const length = value.length;
  const keyLength = keyBytes.length;
  // key field, then value field (tag, length) around an AnyValue (tag, length, text).
  const pairSize = keyLength + 4 + length;
  if (pairSize >= 0x80 || field >= 16) return false;
  w.ensure(pairSize + 2);
  const bytes = w.bytes;
  const start = w.pos;
  bytes[start] = field * 8 + WIRE.bytes;
  bytes[start + 1] = pairSize;
  let at = start + 2;
  for (let i = 0; i < keyLength; i++) bytes[at + i] = keyBytes[i]!;
  at += keyLength;
  bytes[at] = 2 * 8 + WIRE.bytes;
  bytes[at + 1] = length + 2;
  bytes[at + 2] = ANY.string * 8 + WIRE.bytes;
  bytes[at + 3] = length;
  at += 4;
  for (let i = 0; i < length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0x80) return false;
    bytes[at + i] = code;
  }
  w.pos = at + length;
  return true;
}

function writeKeyValue(w: ProtoWriter, field: number, key: string, value: AttributeValue): void {
  if (typeof value === 'string' && writeAsciiKeyValue(w, field, key, value)) return;
  const stringSize = typeof value === 'string' ? utf8Size(value) : -1;
  const valueSize = stringSize >= 0 ? 1 + varintSize(stringSize) + stringSize : anyValueSize(value);
  if (valueSize < 0) {
    const pair = w.begin(field);
    w.stringField(1, key);
    const any = w.begin(2);
    writeAnyValueBody(w, value);
    w.end(any);
    w.end(pair);
    return;
  }
  const keyBytes = encodedKey(key);
  w.key(field, WIRE.bytes);
  w.varint(keyBytes.length + 1 + varintSize(valueSize) + valueSize);
  w.raw(keyBytes);
  w.key(2, WIRE.bytes);
  w.varint(valueSize);
  writeAnyValueBody(w, value, stringSize);
}

/** Each attribute as a KeyValue in repeated field `field`; a flat array holds keys and values in turn. */
export function writeAttributeFields(w: ProtoWriter, field: number, attributes: Attributes | readonly AttributeValue[]): void {
  if (Array.isArray(attributes)) {
    const list = attributes as readonly AttributeValue[];
    for (let i = 0; i + 1 < list.length; i += 2) writeKeyValue(w, field, list[i] as string, list[i + 1]!);
    return;
  }
  const object = attributes as Attributes;
  for (const key in object) {
    const value = object[key];
    if (value !== undefined) writeKeyValue(w, field, key, value);
  }
}

function writeAttributes(w: ProtoWriter, field: number, attributes: Attributes | readonly AttributeValue[], droppedField: number, dropped: number): void {
  writeAttributeFields(w, field, attributes);
  if (dropped !== 0) {
    w.key(droppedField, WIRE.varint);
    w.varint(dropped);
  }
}

/** Bytes kept for a span's length: most spans are 128 bytes to 16 KiB (see `ProtoWriter.begin`). */
const SPAN_LENGTH_BYTES = 2;

/** Appends one span to a chunk, as a `ScopeSpans.spans` field. */
export function writeSpan(
  w: ProtoWriter,
  head: SpanHead,
  attributes: Attributes | readonly AttributeValue[],
  events?: readonly RecordedEvent[],
  links?: readonly Link[],
  dropped: DroppedCounts = NONE_DROPPED,
): void {
  const span = w.begin(SCOPE_SPANS_SPAN_FIELD, SPAN_LENGTH_BYTES);
  w.hexField(SPAN.traceId, head.traceId);
  w.hexField(SPAN.spanId, head.spanId);
  if (head.traceState !== '') w.stringField(SPAN.traceState, head.traceState);
  if (head.parentSpanId !== '') w.hexField(SPAN.parentSpanId, head.parentSpanId);
  w.stringField(SPAN.name, head.name);
  // OTLP's kinds are the API's plus one (0 is unspecified).
  w.key(SPAN.kind, WIRE.varint);
  w.varint(head.kind + 1);
  writeTime(w, SPAN.start, head.startTime);
  writeTime(w, SPAN.end, head.endTime);
  writeAttributes(w, SPAN.attributes, attributes, SPAN.droppedAttributes, dropped.attributes);
  if (events !== undefined) {
    for (const event of events) {
      const at = w.begin(SPAN.events);
      writeTime(w, EVENT.time, event.time);
      w.stringField(EVENT.name, event.name);
      writeAttributes(w, EVENT.attributes, event.attributes, EVENT.droppedAttributes, event.droppedAttributesCount ?? 0);
      w.end(at);
    }
  }
  if (dropped.events !== 0) {
    w.key(SPAN.droppedEvents, WIRE.varint);
    w.varint(dropped.events);
  }
  if (links !== undefined) {
    for (const link of links) {
      const at = w.begin(SPAN.links);
      w.hexField(LINK.traceId, link.context.traceId);
      w.hexField(LINK.spanId, link.context.spanId);
      const state = link.context.traceState?.serialize() ?? '';
      if (state !== '') w.stringField(LINK.traceState, state);
      writeAttributes(w, LINK.attributes, link.attributes ?? {}, LINK.droppedAttributes, link.droppedAttributesCount ?? 0);
      w.key(LINK.flags, WIRE.fixed32);
      w.fixed32(spanFlags(link.context.traceFlags, link.context.isRemote === true));
      w.end(at);
    }
  }
  if (dropped.links !== 0) {
    w.key(SPAN.droppedLinks, WIRE.varint);
    w.varint(dropped.links);
  }
  if (head.statusCode === 0 && head.statusMessage === '') {
    // An empty Status, the usual case.
    w.key(SPAN.status, WIRE.bytes);
    w.varint(0);
  } else {
    const status = w.begin(SPAN.status, 1);
    if (head.statusMessage !== '') w.stringField(STATUS.message, head.statusMessage);
    if (head.statusCode !== 0) {
      w.key(STATUS.code, WIRE.varint);
      w.varint(head.statusCode);
    }
    w.end(status, 1);
  }
  w.key(SPAN.flags, WIRE.fixed32);
  w.fixed32(spanFlags(head.traceFlags, head.parentIsRemote));
  w.end(span, SPAN_LENGTH_BYTES);
}

/** Appends a span the OpenTelemetry SDK finished (the API calls' spans). */
export function writeReadableSpan(w: ProtoWriter, span: ReadableSpan): void {
  const context = span.spanContext();
  const head: SpanHead = {
    name: span.name,
    kind: span.kind,
    traceId: context.traceId,
    spanId: context.spanId,
    traceFlags: context.traceFlags,
    traceState: context.traceState?.serialize() ?? '',
    parentSpanId: span.parentSpanContext?.spanId ?? '',
    parentIsRemote: span.parentSpanContext?.isRemote === true,
    startTime: span.startTime,
    endTime: span.endTime,
    statusCode: span.status.code,
    statusMessage: span.status.message ?? '',
  };
  const events = span.events.map((event) => ({
    name: event.name,
    time: event.time,
    attributes: event.attributes ?? {},
    droppedAttributesCount: event.droppedAttributesCount ?? 0,
  }));
  writeSpan(w, head, span.attributes, events, span.links, {
    attributes: span.droppedAttributesCount,
    events: span.droppedEventsCount,
    links: span.droppedLinksCount,
  });
}
