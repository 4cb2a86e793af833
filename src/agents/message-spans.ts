/**
 * The spans of a recorded message path, kept as a few fields until the
 * executors have their next batch. An agent's turn goes: its result comes
 * back, the execution's `svc.agent.execute` span ends, the messages it wrote
 * are routed in their `svc.messages.send` spans, and the receivers' next
 * executions are posted to the executor thread. Everything the main thread
 * does before that post delays the agents; what it does after runs while the
 * executor works and the main thread would wait. So here the path records
 * only what a span must hold (the message, its ids, its times, its outcome)
 * and the spans' attributes and OTLP bytes are made when the export queue
 * writes them, after the post (`SpanChunkSink.defer`, span-export.ts).
 * docs/benchmarks.md, "Fifteenth pass", has the figures.
 *
 * The only part of a send that cannot wait is its span id: it goes into the
 * `traceparent` of the message it sends, which the next execution reads.
 *
 * An execution span copies what it needs of its parent rather than keeping
 * it, and a send span keeps only its execution, so no span holds the chain of
 * a long conversation (as light-span.ts explains for its spans).
 */
import { createTraceState, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type SpanContext } from '@opentelemetry/api';
import type { Message } from '../bus/message.js';
import type { ExecutionResult } from '../sandbox/types.js';
import type { DeferredSpan, ParentSpan, SpanChunkSink } from '../telemetry/light-span.js';
import { writeMessagePathSpan, type MessagePathSpan } from '../telemetry/message-span-record.js';
import { decodeHexInto, type ProtoWriter } from '../telemetry/proto-writer.js';
import { SPAN_ATTRIBUTES, SPANS } from '../telemetry/span-names.js';
import { writeSpan, type SpanHead } from '../telemetry/span-record.js';
import { hex8, SpanIdBlocks } from '../telemetry/trace-ids.js';

/**
 * Fuel an execution used: the one attribute key of the message path that
 * span-names.ts does not define; docs/observability.md lists it with the others.
 */
export const FUEL_USED_ATTRIBUTE = 'svc.execution.fuel_used';

/**
 * A span whose trace id and own id are held as bytes, a block and an offset
 * each (a light span, or a send span here): what a span of the message path
 * continues without reading hex.
 */
export interface HeldSpan extends ParentSpan {
  readonly traceBlock: Uint8Array;
  readonly traceAt: number;
  readonly idBlock: Uint8Array;
  readonly idAt: number;
  /** False when its ids were not hex of the right length; its children are then written from hex. */
  readonly bytesValid: boolean;
}

const ORIGIN = performance.timeOrigin;
const ids = new SpanIdBlocks();

/** Milliseconds since the epoch, as span times are kept. */
const now = (): number => ORIGIN + performance.now();

/**
 * The attribute lists handed to the writer, filled in for each span as it is
 * written: the writer reads them and keeps nothing, and the message path
 * makes no list of its own.
 */
const EXECUTE_ATTRIBUTES: (string | number)[] = [
  SPAN_ATTRIBUTES.agentId,
  '',
  SPAN_ATTRIBUTES.messageId,
  '',
  SPAN_ATTRIBUTES.messageType,
  '',
  SPAN_ATTRIBUTES.executionStatus,
  '',
  FUEL_USED_ATTRIBUTE,
  0,
];
const SEND_ATTRIBUTES: string[] = [
  SPAN_ATTRIBUTES.messageId,
  '',
  SPAN_ATTRIBUTES.messageType,
  '',
  SPAN_ATTRIBUTES.messageSender,
  '',
  SPAN_ATTRIBUTES.messageReceiver,
  '',
  SPAN_ATTRIBUTES.conversationId,
  '',
];

/** The `traceparent` flags field of `flags`: two lowercase hex digits. */
function flagsHex(flags: number): string {
  if (flags === 1) return '01';
  return (flags < 16 ? '0' : '') + flags.toString(16);
}

/** A context whose active span is `held`'s, for what an execution causes besides messages (log lines, a crash). */
function contextOf(held: { spanContext(): SpanContext }): Context {
  return trace.setSpan(ROOT_CONTEXT, trace.wrapSpanContext(held.spanContext()));
}

/**
 * The `svc.agent.execute` span of an execution in a recorded trace: started
 * at dispatch, ended with the result (`finish`), written after the post.
 * It is its own `SpanHead` when it is written.
 */
export class ExecutionSpan implements DeferredSpan, MessagePathSpan, SpanHead {
  readonly traceId: string;
  readonly traceFlags: number;
  readonly traceState: string;
  readonly traceBlock: Uint8Array;
  readonly traceAt: number;
  readonly parentBlock: Uint8Array;
  readonly parentAt: number;
  readonly idBlock: Uint8Array;
  readonly idAt: number;
  readonly bytesValid: boolean;
  endTime = 0;
  statusCode = SpanStatusCode.UNSET;
  statusMessage = '';
  ended = false;
  private fuel = 0;
  private parentText: string | undefined;
  private idText: string | undefined;

  /** Under `parent`: a span held as bytes, or one named by hex ids (a `traceparent`), read into bytes here. */
  constructor(
    readonly sink: SpanChunkSink,
    readonly agentId: string,
    readonly message: Message,
    parent: HeldSpan | ParentSpan,
    /** Milliseconds since the epoch. */
    readonly startTime: number,
  ) {
    ids.next();
    this.idBlock = ids.block;
    this.idAt = ids.at;
    this.traceId = parent.traceId;
    this.traceFlags = parent.traceFlags;
    this.traceState = parent.traceState;
    if ('traceBlock' in parent) {
      this.traceBlock = parent.traceBlock;
      this.traceAt = parent.traceAt;
      this.parentBlock = parent.idBlock;
      this.parentAt = parent.idAt;
      this.bytesValid = parent.bytesValid;
      if (!parent.bytesValid) this.parentText = parent.spanId;
    } else {
      const bytes = new Uint8Array(24);
      this.bytesValid = decodeHexInto(bytes, 0, parent.traceId, 16) && decodeHexInto(bytes, 16, parent.spanId, 8);
      this.traceBlock = bytes;
      this.traceAt = 0;
      this.parentBlock = bytes;
      this.parentAt = 16;
      this.parentText = parent.spanId;
    }
  }

  get name(): string {
    return SPANS.agentExecute;
  }

  get kind(): SpanKind {
    return SpanKind.CONSUMER;
  }

  get parentIsRemote(): boolean {
    return false;
  }

  get spanId(): string {
    this.idText ??= hex8(this.idBlock, this.idAt);
    return this.idText;
  }

  get parentSpanId(): string {
    this.parentText ??= hex8(this.parentBlock, this.parentAt);
    return this.parentText;
  }

  /** Ends the span with the execution's outcome at `at` (milliseconds since the epoch; default now); queues it for writing. */
  finish(result: ExecutionResult, at?: number): void {
    if (this.ended) return;
    this.ended = true;
    this.endTime = Math.max(this.startTime, at ?? now());
    this.fuel = Number(result.fuelUsed);
    if (!result.ok) {
      this.statusCode = SpanStatusCode.ERROR;
      this.statusMessage = `${result.failure}: ${result.message}`;
    }
    this.sink.defer(this);
  }

  spanContext(): SpanContext {
    return {
      traceId: this.traceId,
      spanId: this.spanId,
      traceFlags: this.traceFlags,
      isRemote: false,
      ...(this.traceState === '' ? {} : { traceState: createTraceState(this.traceState) }),
    };
  }

  /** A context with this span active. */
  context(): Context {
    return contextOf(this);
  }

  writeTo(chunk: ProtoWriter): void {
    const list = EXECUTE_ATTRIBUTES;
    list[1] = this.agentId;
    list[3] = this.message.message_id;
    list[5] = this.message.message_type;
    // The values of `svc_agent_executions_total{status}`.
    list[7] = this.statusCode === SpanStatusCode.ERROR ? 'error' : 'success';
    list[9] = this.fuel;
    if (!this.bytesValid || !writeMessagePathSpan(chunk, this, list)) writeSpan(chunk, this, list);
  }
}

/**
 * The `svc.messages.send` span of a message an execution wrote, in that
 * execution's trace. It starts and ends at the execution's end when that
 * has ended (the router takes a message in microseconds), else it covers
 * the routing (`finish`).
 */
export class SendSpan implements DeferredSpan, MessagePathSpan, HeldSpan, SpanHead {
  readonly idBlock: Uint8Array;
  readonly idAt: number;
  readonly startTime: number;
  endTime: number;
  statusCode = SpanStatusCode.UNSET;
  statusMessage = '';
  /** The `traceparent` of the message it sends. */
  readonly traceparentText: string;
  private readonly running: boolean;

  constructor(
    readonly execution: ExecutionSpan,
    readonly message: Message,
  ) {
    ids.next();
    this.idBlock = ids.block;
    this.idAt = ids.at;
    this.running = !execution.ended;
    this.startTime = this.running ? now() : execution.endTime;
    this.endTime = this.startTime;
    this.traceparentText = `00-${execution.traceId}-${hex8(this.idBlock, this.idAt)}-${flagsHex(execution.traceFlags)}`;
  }

  get name(): string {
    return SPANS.messagesSend;
  }

  get kind(): SpanKind {
    return SpanKind.PRODUCER;
  }

  get parentIsRemote(): boolean {
    return false;
  }

  get traceId(): string {
    return this.execution.traceId;
  }

  get traceFlags(): number {
    return this.execution.traceFlags;
  }

  get traceState(): string {
    return this.execution.traceState;
  }

  get traceBlock(): Uint8Array {
    return this.execution.traceBlock;
  }

  get traceAt(): number {
    return this.execution.traceAt;
  }

  get parentBlock(): Uint8Array {
    return this.execution.idBlock;
  }

  get parentAt(): number {
    return this.execution.idAt;
  }

  get bytesValid(): boolean {
    return this.execution.bytesValid;
  }

  get spanId(): string {
    return this.traceparentText.slice(36, 52);
  }

  get parentSpanId(): string {
    return this.execution.spanId;
  }

  traceparent(): string {
    return this.traceparentText;
  }

  /** The routing is over: a refusal (`reason`) makes the span failed. Queues it for writing. */
  finish(reason?: string): void {
    if (reason !== undefined) {
      this.statusCode = SpanStatusCode.ERROR;
      this.statusMessage = reason;
    }
    if (this.running) this.endTime = Math.max(this.startTime, now());
    this.execution.sink.defer(this);
  }

  spanContext(): SpanContext {
    return { ...this.execution.spanContext(), spanId: this.spanId };
  }

  writeTo(chunk: ProtoWriter): void {
    const list = SEND_ATTRIBUTES;
    const message = this.message;
    list[1] = message.message_id;
    list[3] = message.message_type;
    list[5] = message.sender;
    list[7] = message.receiver;
    list[9] = message.conversation_id;
    if (!this.bytesValid || !writeMessagePathSpan(chunk, this, list)) writeSpan(chunk, this, list);
  }
}
