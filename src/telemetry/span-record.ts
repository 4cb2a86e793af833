/**
 * A finished span as a run of plain values appended to a batch array, the
 * form in which spans cross from the main thread to the export thread
 * (span-export.ts). A flat array of strings and numbers is what
 * `postMessage` copies fastest: about 0.4 µs a span here, against several
 * microseconds to build OpenTelemetry's objects and serialize OTLP, which is
 * now done on the export thread.
 *
 * Layout of one span, in order:
 *
 *     name, kind, traceId, spanId, traceFlags, traceState,
 *     parentSpanId, parentIsRemote, startMs, endMs, statusCode, statusMessage,
 *     <attributes>, droppedEvents, eventCount, <event>*, droppedLinks, linkCount, <link>*
 *
 *     <attributes> = droppedAttributes, count, (key, value)*
 *     <event>      = name, timeMs, <attributes>
 *     <link>       = traceId, spanId, traceFlags, traceState, isRemote, <attributes>
 *
 * Absent strings (no parent, no trace state, no status message) are `''`,
 * booleans are 0/1, times are milliseconds since the epoch as a double
 * (resolution about 0.25 µs today), ids are lowercase hex.
 */
import { createTraceState, type Attributes, type AttributeValue, type Link, type SpanContext, type SpanKind, type SpanStatusCode } from '@opentelemetry/api';
import type { resources, tracing } from '@opentelemetry/sdk-node';

/** One value of a batch: what an attribute may hold, which includes every field of the layout. */
export type SpanBatch = AttributeValue[];

type HrTime = [number, number];
type Resource = resources.Resource;
type ReadableSpan = tracing.ReadableSpan;
type TimedEvent = ReadableSpan['events'][number];
type InstrumentationScope = ReadableSpan['instrumentationScope'];

/** The fields of a span before its attributes, in layout order. */
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
  startMs: number;
  endMs: number;
  statusCode: SpanStatusCode;
  statusMessage: string;
}

/** The fields of a link before its attributes, in layout order. */
export interface LinkHead {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState: string;
  isRemote: boolean;
}

/** Appends the head of a span; its attributes, events and links follow (`writeAttributes`, `writeEventsAndLinks`). */
export function writeHead(batch: SpanBatch, head: SpanHead): void {
  batch.push(
    head.name,
    head.kind,
    head.traceId,
    head.spanId,
    head.traceFlags,
    head.traceState,
    head.parentSpanId,
    head.parentIsRemote ? 1 : 0,
    head.startMs,
    head.endMs,
    head.statusCode,
    head.statusMessage,
  );
}

export function writeAttributes(batch: SpanBatch, attributes: Attributes, dropped = 0): void {
  const at = batch.length;
  batch.push(dropped, 0);
  let count = 0;
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined) continue;
    batch.push(key, value);
    count += 1;
  }
  batch[at + 1] = count;
}

/** An event of a span, its time in milliseconds since the epoch. */
export interface RecordedEvent {
  name: string;
  timeMs: number;
  attributes: Attributes;
  droppedAttributesCount?: number;
}

/** Appends the tail of a span: its events and links. */
export function writeEventsAndLinks(batch: SpanBatch, events: readonly RecordedEvent[], links: readonly Link[], droppedEvents = 0, droppedLinks = 0): void {
  batch.push(droppedEvents, events.length);
  for (const event of events) {
    batch.push(event.name, event.timeMs);
    writeAttributes(batch, event.attributes, event.droppedAttributesCount ?? 0);
  }
  batch.push(droppedLinks, links.length);
  for (const link of links) {
    const linked = link.context;
    batch.push(linked.traceId, linked.spanId, linked.traceFlags, linked.traceState?.serialize() ?? '', linked.isRemote === true ? 1 : 0);
    writeAttributes(batch, link.attributes ?? {}, link.droppedAttributesCount ?? 0);
  }
}

export function hrTimeToMs(time: HrTime): number {
  return time[0] * 1e3 + time[1] / 1e6;
}

function msToHrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1e3);
  return [seconds, Math.round((ms - seconds * 1e3) * 1e6)];
}

/** Appends a span the OpenTelemetry SDK finished (the API calls' spans). */
export function writeReadableSpan(batch: SpanBatch, span: ReadableSpan): void {
  const context = span.spanContext();
  writeHead(batch, {
    name: span.name,
    kind: span.kind,
    traceId: context.traceId,
    spanId: context.spanId,
    traceFlags: context.traceFlags,
    traceState: context.traceState?.serialize() ?? '',
    parentSpanId: span.parentSpanContext?.spanId ?? '',
    parentIsRemote: span.parentSpanContext?.isRemote === true,
    startMs: hrTimeToMs(span.startTime),
    endMs: hrTimeToMs(span.endTime),
    statusCode: span.status.code,
    statusMessage: span.status.message ?? '',
  });
  writeAttributes(batch, span.attributes, span.droppedAttributesCount);
  const events = span.events.map((event) => ({
    name: event.name,
    timeMs: hrTimeToMs(event.time),
    attributes: event.attributes ?? {},
    droppedAttributesCount: event.droppedAttributesCount ?? 0,
  }));
  writeEventsAndLinks(batch, events, span.links, span.droppedEventsCount, span.droppedLinksCount);
}

/** Reads a batch field by field; a malformed batch (a bug, never input) throws. */
export class BatchCursor {
  private at = 0;
  constructor(private readonly batch: SpanBatch) {}

  get done(): boolean {
    return this.at >= this.batch.length;
  }

  value(): AttributeValue {
    if (this.at >= this.batch.length) throw new Error('span batch ends inside a span');
    return this.batch[this.at++]!;
  }

  string(): string {
    const value = this.value();
    if (typeof value !== 'string') throw new Error(`span batch: expected a string at ${this.at - 1}`);
    return value;
  }

  number(): number {
    const value = this.value();
    if (typeof value !== 'number') throw new Error(`span batch: expected a number at ${this.at - 1}`);
    return value;
  }

  /** The fields of a span before its attributes. */
  head(): SpanHead {
    return {
      name: this.string(),
      kind: this.number() as SpanKind,
      traceId: this.string(),
      spanId: this.string(),
      traceFlags: this.number(),
      traceState: this.string(),
      parentSpanId: this.string(),
      parentIsRemote: this.number() === 1,
      startMs: this.number(),
      endMs: this.number(),
      statusCode: this.number() as SpanStatusCode,
      statusMessage: this.string(),
    };
  }

  /** The fields of a link before its attributes. */
  linkHead(): LinkHead {
    return { traceId: this.string(), spanId: this.string(), traceFlags: this.number(), traceState: this.string(), isRemote: this.number() === 1 };
  }

  attributes(): { attributes: Attributes; dropped: number } {
    const dropped = this.number();
    const count = this.number();
    const attributes: Attributes = {};
    for (let i = 0; i < count; i++) attributes[this.string()] = this.value();
    return { attributes, dropped };
  }
}

function spanContext(traceId: string, spanId: string, traceFlags: number, traceState: string, isRemote: boolean): SpanContext {
  return {
    traceId,
    spanId,
    traceFlags,
    isRemote,
    ...(traceState === '' ? {} : { traceState: createTraceState(traceState) }),
  };
}

/**
 * The spans of a batch as the SDK's exporters take them. Every span gets the
 * same `resource` and `scope` objects: the OTLP encoders group spans by
 * resource identity.
 */
export function readSpans(batch: SpanBatch, resource: Resource, scope: InstrumentationScope): ReadableSpan[] {
  const reader = new BatchCursor(batch);
  const spans: ReadableSpan[] = [];
  while (!reader.done) {
    const { name, kind, traceId, spanId, traceFlags, traceState, parentSpanId, parentIsRemote, startMs, endMs, statusCode, statusMessage } = reader.head();
    const status = { code: statusCode, message: statusMessage };
    const { attributes, dropped: droppedAttributesCount } = reader.attributes();
    const droppedEventsCount = reader.number();
    const events: TimedEvent[] = [];
    for (let i = reader.number(); i > 0; i--) {
      const eventName = reader.string();
      const time = msToHrTime(reader.number());
      const read = reader.attributes();
      events.push({ name: eventName, time, attributes: read.attributes, droppedAttributesCount: read.dropped });
    }
    const droppedLinksCount = reader.number();
    const links: Link[] = [];
    for (let i = reader.number(); i > 0; i--) {
      const link = reader.linkHead();
      const context = spanContext(link.traceId, link.spanId, link.traceFlags, link.traceState, link.isRemote);
      const read = reader.attributes();
      links.push({ context, attributes: read.attributes, droppedAttributesCount: read.dropped });
    }
    const own = spanContext(traceId, spanId, traceFlags, traceState, false);
    spans.push({
      name,
      kind,
      spanContext: () => own,
      ...(parentSpanId === '' ? {} : { parentSpanContext: { traceId, spanId: parentSpanId, traceFlags, isRemote: parentIsRemote } }),
      startTime: msToHrTime(startMs),
      endTime: msToHrTime(endMs),
      duration: msToHrTime(endMs - startMs),
      ended: true,
      status: status.message === '' ? { code: status.code } : status,
      attributes,
      links,
      events,
      resource,
      instrumentationScope: scope,
      droppedAttributesCount,
      droppedEventsCount,
      droppedLinksCount,
    });
  }
  return spans;
}
