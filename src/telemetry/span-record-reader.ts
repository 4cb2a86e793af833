/**
 * Chunks of encoded spans (span-record.ts) read back into the SDK's
 * `ReadableSpan`s, for exporters handed in by tests and benchmarks
 * (span-export.ts, `createInThreadSpanExport`). Off the hot path: it reads
 * with protobufjs's reader and keeps times exact with BigInt.
 */
import { createTraceState, type Attributes, type AttributeValue, type Link, type SpanContext, type SpanKind, type SpanStatusCode } from '@opentelemetry/api';
import type { resources, tracing } from '@opentelemetry/sdk-node';
import protobuf from 'protobufjs';
import { ANY, EVENT, FLAGS_IS_REMOTE, LINK, SCOPE_SPANS_SPAN_FIELD, SPAN, STATUS } from './otlp-trace-fields.js';
import { WIRE } from './proto-writer.js';
import { hrTimeToMs, msToHrTime } from './span-record.js';

type HrTime = [number, number];
type Resource = resources.Resource;
type ReadableSpan = tracing.ReadableSpan;
type TimedEvent = ReadableSpan['events'][number];
type InstrumentationScope = ReadableSpan['instrumentationScope'];

const hex = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');

/** A fixed64 of nanoseconds as whole seconds and nanoseconds, exactly (reading back is off the hot path). */
function readTime(reader: protobuf.Reader): HrTime {
  const low = reader.fixed32();
  const high = reader.fixed32();
  const total = (BigInt(high) << 32n) | BigInt(low);
  return [Number(total / 1_000_000_000n), Number(total % 1_000_000_000n)];
}

function readAnyValue(reader: protobuf.Reader, end: number): AttributeValue | undefined {
  let value: AttributeValue | undefined;
  while (reader.pos < end) {
    const key = reader.uint32();
    switch (key >>> 3) {
      case ANY.string:
        value = reader.string();
        break;
      case ANY.bool:
        value = reader.bool();
        break;
      case ANY.int:
        value = Number(reader.int64());
        break;
      case ANY.double:
        value = reader.double();
        break;
      case ANY.array: {
        const arrayEnd = reader.uint32() + reader.pos;
        const items: unknown[] = [];
        while (reader.pos < arrayEnd) {
          reader.uint32();
          const itemEnd = reader.uint32() + reader.pos;
          items.push(readAnyValue(reader, itemEnd) ?? null);
        }
        value = items as AttributeValue;
        break;
      }
      default:
        reader.skipType(key & 7);
    }
  }
  return value;
}

function readKeyValue(reader: protobuf.Reader, into: Attributes): void {
  const end = reader.uint32() + reader.pos;
  let name = '';
  let value: AttributeValue | undefined;
  while (reader.pos < end) {
    const key = reader.uint32();
    if (key >>> 3 === 1) name = reader.string();
    else if (key >>> 3 === 2) value = readAnyValue(reader, reader.uint32() + reader.pos);
    else reader.skipType(key & 7);
  }
  if (value !== undefined) into[name] = value;
}

function context(traceId: string, spanId: string, flags: number, traceState: string): SpanContext {
  return {
    traceId,
    spanId,
    traceFlags: flags & 0xff,
    isRemote: (flags & FLAGS_IS_REMOTE) !== 0,
    ...(traceState === '' ? {} : { traceState: createTraceState(traceState) }),
  };
}

function readEvent(reader: protobuf.Reader): TimedEvent {
  const end = reader.uint32() + reader.pos;
  const event: TimedEvent = { name: '', time: [0, 0], attributes: {}, droppedAttributesCount: 0 };
  while (reader.pos < end) {
    const key = reader.uint32();
    switch (key >>> 3) {
      case EVENT.time:
        event.time = readTime(reader);
        break;
      case EVENT.name:
        event.name = reader.string();
        break;
      case EVENT.attributes:
        readKeyValue(reader, event.attributes!);
        break;
      case EVENT.droppedAttributes:
        event.droppedAttributesCount = reader.uint32();
        break;
      default:
        reader.skipType(key & 7);
    }
  }
  return event;
}

function readLink(reader: protobuf.Reader): Link {
  const end = reader.uint32() + reader.pos;
  let traceId = '';
  let spanId = '';
  let traceState = '';
  let flags = 0;
  const attributes: Attributes = {};
  let droppedAttributesCount = 0;
  while (reader.pos < end) {
    const key = reader.uint32();
    switch (key >>> 3) {
      case LINK.traceId:
        traceId = hex(reader.bytes());
        break;
      case LINK.spanId:
        spanId = hex(reader.bytes());
        break;
      case LINK.traceState:
        traceState = reader.string();
        break;
      case LINK.attributes:
        readKeyValue(reader, attributes);
        break;
      case LINK.droppedAttributes:
        droppedAttributesCount = reader.uint32();
        break;
      case LINK.flags:
        flags = reader.fixed32();
        break;
      default:
        reader.skipType(key & 7);
    }
  }
  return { context: context(traceId, spanId, flags, traceState), attributes, droppedAttributesCount };
}

function readSpan(reader: protobuf.Reader, end: number, resource: Resource, scope: InstrumentationScope): ReadableSpan {
  let traceId = '';
  let spanId = '';
  let traceState = '';
  let parentSpanId = '';
  let name = '';
  let kind = 0;
  let startTime: HrTime = [0, 0];
  let endTime: HrTime = [0, 0];
  const attributes: Attributes = {};
  const events: TimedEvent[] = [];
  const links: Link[] = [];
  const dropped = { attributes: 0, events: 0, links: 0 };
  const status: { code: SpanStatusCode; message?: string } = { code: 0 };
  let flags = 0;
  while (reader.pos < end) {
    const key = reader.uint32();
    switch (key >>> 3) {
      case SPAN.traceId:
        traceId = hex(reader.bytes());
        break;
      case SPAN.spanId:
        spanId = hex(reader.bytes());
        break;
      case SPAN.traceState:
        traceState = reader.string();
        break;
      case SPAN.parentSpanId:
        parentSpanId = hex(reader.bytes());
        break;
      case SPAN.name:
        name = reader.string();
        break;
      case SPAN.kind:
        kind = reader.uint32() - 1;
        break;
      case SPAN.start:
        startTime = readTime(reader);
        break;
      case SPAN.end:
        endTime = readTime(reader);
        break;
      case SPAN.attributes:
        readKeyValue(reader, attributes);
        break;
      case SPAN.droppedAttributes:
        dropped.attributes = reader.uint32();
        break;
      case SPAN.events:
        events.push(readEvent(reader));
        break;
      case SPAN.droppedEvents:
        dropped.events = reader.uint32();
        break;
      case SPAN.links:
        links.push(readLink(reader));
        break;
      case SPAN.droppedLinks:
        dropped.links = reader.uint32();
        break;
      case SPAN.status: {
        const statusEnd = reader.uint32() + reader.pos;
        while (reader.pos < statusEnd) {
          const statusKey = reader.uint32();
          if (statusKey >>> 3 === STATUS.message) status.message = reader.string();
          else if (statusKey >>> 3 === STATUS.code) status.code = reader.uint32();
          else reader.skipType(statusKey & 7);
        }
        break;
      }
      case SPAN.flags:
        flags = reader.fixed32();
        break;
      default:
        reader.skipType(key & 7);
    }
  }
  const own = context(traceId, spanId, flags & 0xff, traceState);
  own.isRemote = false;
  const durationMs = Math.max(0, hrTimeToMs(endTime) - hrTimeToMs(startTime));
  return {
    name,
    kind: kind as SpanKind,
    spanContext: () => own,
    ...(parentSpanId === ''
      ? {}
      : { parentSpanContext: { traceId, spanId: parentSpanId, traceFlags: flags & 0xff, isRemote: (flags & FLAGS_IS_REMOTE) !== 0 } }),
    startTime,
    endTime,
    duration: msToHrTime(durationMs),
    ended: true,
    status,
    attributes,
    links,
    events,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: dropped.attributes,
    droppedEventsCount: dropped.events,
    droppedLinksCount: dropped.links,
  };
}

/**
 * The spans of a chunk as the SDK's exporters take them. Every span gets the
 * same `resource` and `scope` objects: the OTLP encoders group spans by
 * resource identity. A malformed chunk (a bug, never input) throws.
 */
export function readSpans(chunk: Uint8Array, resource: Resource, scope: InstrumentationScope): ReadableSpan[] {
  const reader = protobuf.Reader.create(chunk);
  const spans: ReadableSpan[] = [];
  while (reader.pos < reader.len) {
    const key = reader.uint32();
    if (key !== SCOPE_SPANS_SPAN_FIELD * 8 + WIRE.bytes) throw new Error(`span chunk: unexpected field key ${key} at ${reader.pos}`);
    const length = reader.uint32();
    if (reader.pos + length > reader.len) throw new Error('span chunk ends inside a span');
    spans.push(readSpan(reader, reader.pos + length, resource, scope));
  }
  return spans;
}
