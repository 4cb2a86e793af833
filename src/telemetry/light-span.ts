/**
 * The spans of the message path (`svc.messages.send`, `svc.agent.execute`),
 * recorded without the OpenTelemetry SDK's span machinery. That path
 * carries 50–100k messages a second and makes two spans per message when a
 * trace is sampled; the SDK's span (attribute limits, processors, hrtime
 * anchoring) and the context objects around it cost about 10 µs a message
 * with export, which halved throughput at `trace_sample_rate` 1.0. A light
 * span is a few fields; once it has ended it is written as OTLP protobuf
 * into the export chunk (span-record.ts), like every other span.
 *
 * It implements the API's `Span`, so it can be made active in a context
 * (`trace.setSpan`) for the log lines and crashes of an execution, and it
 * behaves like the SDK's: random ids that are never all zeros, a sampled
 * child of a sampled parent only (the caller checks), the same exception
 * event, nothing recorded after `end`.
 */
import {
  createTraceState,
  SpanStatusCode,
  type Attributes,
  type AttributeValue,
  type Exception,
  type Link,
  type Span,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  type TimeInput,
} from '@opentelemetry/api';
import { core } from '@opentelemetry/sdk-node';
import { writeMessagePathSpan, type MessagePathSpan } from './message-span-record.js';
import { decodeHexInto, type ProtoWriter } from './proto-writer.js';
import { hrTimeToMs, writeSpan, type RecordedEvent, type SpanHead } from './span-record.js';
import { hex8, SpanIdBlocks } from './trace-ids.js';

/** A finished span that writes itself into a batch when the queue gets to it. */
export interface DeferredSpan {
  writeTo(chunk: ProtoWriter): void;
}

/** Where a finished light span goes: the export queue (span-export.ts). */
export interface SpanChunkSink {
  /** The chunk to append one span to, or undefined when the queue is full and the span is dropped. */
  open(): ProtoWriter | undefined;
  /** The span appended since `open` is complete. */
  commit(): void;
  /** Takes a finished span to write later in this turn of the event loop, after the work in progress. */
  defer(span: DeferredSpan): void;
}

/** The parent a light span continues: a span of this process or one named by a message's `traceparent`. */
export interface ParentSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  /** Serialized `tracestate`, or `''`. */
  readonly traceState: string;
}

/**
 * A span's attributes as one flat array, key then value: the message path
 * makes its attributes this way, which writes faster than an object's
 * properties can be enumerated.
 */
export type AttributeList = AttributeValue[];

function toAttributeList(attributes: Attributes): AttributeList {
  const list: AttributeList = [];
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined) list.push(key, value);
  }
  return list;
}

const ORIGIN = performance.timeOrigin;
const ids = new SpanIdBlocks();

function epochMs(time: TimeInput | undefined): number {
  if (time === undefined) return ORIGIN + performance.now();
  return hrTimeToMs(core.timeInputToHrTime(time));
}


/**
 * A span of the message path; it is its own `SpanHead` when it is written.
 * It copies what it needs of its parent rather than keeping it: a child
 * that held its parent would hold the whole chain of a long conversation.
 *
 * Its ids are kept as bytes, as the record takes them: its own in a block
 * of span ids (trace-ids.ts), its trace's and its parent's where its parent
 * keeps them, so a conversation's spans share one copy of the trace id. A
 * parent from elsewhere (a `traceparent`, the SDK) is read into bytes once.
 * The hex spelling of an id is made only when asked for.
 */
export class LightSpan implements Span, ParentSpan, DeferredSpan, SpanHead, MessagePathSpan {
  readonly startTime: number;
  readonly parentIsRemote = false;
  readonly traceId: string;
  readonly traceFlags: number;
  readonly traceState: string;
  readonly idBlock: Uint8Array;
  readonly idAt: number;
  readonly traceBlock: Uint8Array;
  readonly traceAt: number;
  readonly parentBlock: Uint8Array;
  readonly parentAt: number;
  /** False when the parent's ids were not hex of the right length: the span is then written from its hex ids, as given. */
  private readonly bytesValid: boolean = true;
  private spanIdText: string | undefined;
  private parentSpanIdText: string | undefined;
  private endMs = 0;
  private code = SpanStatusCode.UNSET;
  private message = '';
  private ended = false;
  private events: RecordedEvent[] | undefined;
  private links: Link[] | undefined;
  private context: SpanContext | undefined;
  private traceparentText: string | undefined;
  private readonly attributes: AttributeList;

  constructor(
    private readonly sink: SpanChunkSink,
    private spanName: string,
    readonly kind: SpanKind,
    parent: ParentSpan,
    attributes: Attributes | AttributeList,
    /** Milliseconds since the epoch; default now. */
    startTime?: number,
  ) {
    this.startTime = startTime ?? ORIGIN + performance.now();
    ids.next();
    this.idBlock = ids.block;
    this.idAt = ids.at;
    this.traceId = parent.traceId;
    this.traceFlags = parent.traceFlags;
    this.traceState = parent.traceState;
    if (parent instanceof LightSpan) {
      this.traceBlock = parent.traceBlock;
      this.traceAt = parent.traceAt;
      this.parentBlock = parent.idBlock;
      this.parentAt = parent.idAt;
      this.bytesValid = parent.bytesValid;
    } else {
      const bytes = new Uint8Array(24);
      this.bytesValid = decodeHexInto(bytes, 0, parent.traceId, 16) && decodeHexInto(bytes, 16, parent.spanId, 8);
      this.traceBlock = bytes;
      this.traceAt = 0;
      this.parentBlock = bytes;
      this.parentAt = 16;
      this.parentSpanIdText = parent.spanId;
    }
    this.attributes = Array.isArray(attributes) ? attributes : toAttributeList(attributes);
  }

  get spanId(): string {
    this.spanIdText ??= hex8(this.idBlock, this.idAt);
    return this.spanIdText;
  }

  get parentSpanId(): string {
    this.parentSpanIdText ??= hex8(this.parentBlock, this.parentAt);
    return this.parentSpanIdText;
  }

  get name(): string {
    return this.spanName;
  }

  get endTime(): number {
    return this.endMs;
  }

  get statusCode(): SpanStatusCode {
    return this.code;
  }

  get statusMessage(): string {
    return this.message;
  }

  /** This span as a W3C `traceparent` value, for the metadata of the message it sends; the same string each time. */
  traceparent(): string {
    this.traceparentText ??= `00-${this.traceId}-${this.spanId}-${this.traceFlags < 16 ? '0' : ''}${this.traceFlags.toString(16)}`;
    return this.traceparentText;
  }

  spanContext(): SpanContext {
    this.context ??= {
      traceId: this.traceId,
      spanId: this.spanId,
      traceFlags: this.traceFlags,
      isRemote: false,
      ...(this.traceState === '' ? {} : { traceState: createTraceState(this.traceState) }),
    };
    return this.context;
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (this.ended) return this;
    const list = this.attributes;
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] === key) {
        list[i + 1] = value;
        return this;
      }
    }
    list.push(key, value);
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) {
      const value = attributes[key];
      if (value !== undefined) this.setAttribute(key, value);
    }
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this;
    const isTime = typeof attributesOrTime === 'number' || attributesOrTime instanceof Date || Array.isArray(attributesOrTime);
    const attributes = isTime || attributesOrTime === undefined ? {} : (attributesOrTime as Attributes);
    (this.events ??= []).push({ name, time: epochMs(isTime ? (attributesOrTime as TimeInput) : time), attributes });
    return this;
  }

  addLink(link: Link): this {
    if (!this.ended) (this.links ??= []).push(link);
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.ended) return this;
    this.code = status.code;
    this.message = status.message ?? '';
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) this.spanName = name;
    return this;
  }

  isRecording(): boolean {
    return !this.ended;
  }

  /** The `exception` event of the OpenTelemetry semantic conventions, as the SDK's spans record it. */
  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === 'string') attributes['exception.message'] = exception;
    else {
      const type = exception.name ?? (exception.code === undefined ? undefined : String(exception.code));
      if (type !== undefined) attributes['exception.type'] = type;
      if (exception.message !== undefined) attributes['exception.message'] = exception.message;
      if (exception.stack !== undefined) attributes['exception.stacktrace'] = exception.stack;
    }
    this.addEvent('exception', attributes, time);
  }

  /**
   * Ends the span. It is written into the export batch later in this turn of
   * the event loop (`SpanChunkSink.defer`): on the message path that is
   * after the executors have their next batch, so recording never delays
   * the agents' next messages.
   */
  end(endTime?: TimeInput): void {
    this.endAt(epochMs(endTime));
  }

  /** `end` at a time in milliseconds since the epoch, as `startTime` is (a time already read for another span). */
  endAt(ms: number): void {
    if (this.ended) return;
    this.ended = true;
    this.endMs = Math.max(this.startTime, ms);
    this.sink.defer(this);
  }

  /** Whether the span has ended. */
  get hasEnded(): boolean {
    return this.ended;
  }

  writeTo(chunk: ProtoWriter): void {
    if (this.events === undefined && this.links === undefined && this.bytesValid && writeMessagePathSpan(chunk, this, this.attributes)) return;
    writeSpan(chunk, this, this.attributes, this.events, this.links);
  }
}
