/**
 * Trace context on the message path: the `svc.messages.send` span of a
 * message accepted for delivery, the `svc.agent.execute` span of each
 * execution, and the W3C context in every message's `metadata` that links
 * them. A client's message, the agent that handles it and the messages that
 * agent sends on are one trace (docs/observability.md, "One trace across
 * hops").
 *
 * Spans are made here only for traces that are recorded (tracing on and the
 * trace sampled), and they are light spans (telemetry/light-span.ts): this
 * path carries 50–100k messages a second, two spans a message, where the
 * SDK's spans cost several times more. Their parent comes straight from the
 * `traceparent` string a message carries, without building a context; a
 * message this process stamped a moment ago (an agent's reply to an agent
 * here, the usual case) finds its sending span among the last ones instead,
 * and its `traceparent` is not parsed at all.
 * A trace that is not recorded still travels: its context passes on
 * unchanged (a message an agent sends carries the `traceparent` of the
 * message it handled), which costs two string copies and keeps the trace id
 * in every hop's log lines. A child of an unsampled parent is never sampled
 * (as with the SDK's `ParentBased` sampler), so nothing that would have
 * been exported is lost.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span, type SpanContext } from '@opentelemetry/api';
import type { Message } from '../bus/message.js';
import type { ExecutionResult } from '../sandbox/types.js';
import { LightSpan, type AttributeList, type ParentSpan } from '../telemetry/light-span.js';
import { SPAN_ATTRIBUTES, SPANS } from '../telemetry/span-names.js';
import { extractMessageMetadata, injectMessageMetadata, TRACEPARENT, TRACESTATE } from '../telemetry/trace-context.js';
import type { Tracing } from '../telemetry/tracing.js';
import type { RouteOutcome } from './router.js';

/**
 * Fuel an execution used: the one attribute key of the message path that
 * span-names.ts does not define; docs/observability.md lists it with the others.
 */
export const FUEL_USED_ATTRIBUTE = 'svc.execution.fuel_used';

export interface MessageTrace {
  /**
   * Routes a client's message in its `svc.messages.send` span, a child of
   * `parent` (the API call), and writes the span's context into the message's
   * metadata, replacing any `traceparent`/`tracestate` the client put there.
   */
  sendFromClient(message: Message, parent: Context, route: (message: Message) => RouteOutcome): RouteOutcome;
  /**
   * Routes a message an agent wrote while handling `incoming`; `execution` is
   * that execution's span (undefined when its trace is not recorded, and then
   * `incoming`'s context passes on). An execution's span ends with its
   * result, before its messages are routed; their spans are stamped with
   * that instant.
   */
  sendFromAgent(message: Message, incoming: Message, execution: Span | undefined, route: (message: Message) => RouteOutcome): RouteOutcome;
  /**
   * The `svc.agent.execute` span of handling `message`, child of the context it carries; undefined when that
   * trace is not recorded. `at` is the dispatch in milliseconds since the epoch, when the caller has read the
   * clock already (each reading costs the message path about 1% of its throughput, docs/benchmarks.md).
   */
  startExecution(agentId: string, message: Message, at?: number): Span | undefined;
  /** Ends it with the execution's status and fuel (a refused execution is a failed one); `at` as for `startExecution`. */
  endExecution(span: Span, result: ExecutionResult, at?: number): void;
  /** The context of an execution, for what it causes besides messages: log lines, a crash. */
  executionContext(message: Message, execution: Span | undefined): Context;
  /** The context `message` was sent in. */
  messageContext(message: Message): Context;
}

/** The attributes of a message's `svc.messages.send` span, key then value. */
function sendAttributes(message: Message): AttributeList {
  return [
    SPAN_ATTRIBUTES.messageId,
    message.message_id,
    SPAN_ATTRIBUTES.messageType,
    message.message_type,
    SPAN_ATTRIBUTES.messageSender,
    message.sender,
    SPAN_ATTRIBUTES.messageReceiver,
    message.receiver,
    SPAN_ATTRIBUTES.conversationId,
    message.conversation_id,
  ];
}

function sendAttributeObject(message: Message): Attributes {
  const list = sendAttributes(message);
  const attributes: Attributes = {};
  for (let i = 0; i < list.length; i += 2) attributes[list[i] as string] = list[i + 1];
  return attributes;
}

/** Removes the keys only when present: `delete` of a missing key would still turn the object into a slow dictionary. */
function clearTraceContext(metadata: Record<string, string>): void {
  if (metadata[TRACEPARENT] !== undefined) delete metadata[TRACEPARENT];
  if (metadata[TRACESTATE] !== undefined) delete metadata[TRACESTATE];
}

const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);
const DASH = 45;

/** 1 for the character codes of lowercase hex digits. */
const LOWER_HEX = new Uint8Array(128);
for (const digit of '0123456789abcdef') LOWER_HEX[digit.charCodeAt(0)] = 1;

function lowerHex(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    if (code >= 128 || LOWER_HEX[code] === 0) return false;
  }
  return true;
}

/**
 * Whether `value` is a `traceparent` of version 00, the form the server
 * writes: `00-` 32 hex `-` 16 hex `-` 2 hex, lowercase. Checked by hand,
 * which is quicker than a regular expression on this path.
 */
function isTraceparent00(value: string): boolean {
  return (
    value.length === 55 &&
    value.charCodeAt(0) === 48 &&
    value.charCodeAt(1) === 48 &&
    value.charCodeAt(2) === DASH &&
    value.charCodeAt(35) === DASH &&
    value.charCodeAt(52) === DASH &&
    lowerHex(value, 3, 35) &&
    lowerHex(value, 36, 52) &&
    lowerHex(value, 53, 55)
  );
}

function parentOfContext(context: SpanContext): ParentSpan {
  return { traceId: context.traceId, spanId: context.spanId, traceFlags: context.traceFlags, traceState: context.traceState?.serialize() ?? '' };
}

/** The span a message was sent in, from its metadata; undefined when it carries no valid `traceparent`. */
function messageParent(metadata: Record<string, string>): ParentSpan | undefined {
  const traceparent = metadata[TRACEPARENT];
  if (traceparent === undefined) return undefined;
  if (isTraceparent00(traceparent)) {
    const traceId = traceparent.slice(3, 35);
    const spanId = traceparent.slice(36, 52);
    if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return undefined;
    return { traceId, spanId, traceFlags: parseInt(traceparent.slice(53), 16), traceState: metadata[TRACESTATE] ?? '' };
  }
  const context = trace.getSpanContext(extractMessageMetadata(metadata));
  return context !== undefined && trace.isSpanContextValid(context) ? parentOfContext(context) : undefined;
}

/** True when a version-00 `traceparent` says its trace is not sampled: most messages at low sample rates, decided without parsing. */
function unsampled(traceparent: string | undefined): boolean {
  if (traceparent === undefined || traceparent.length !== 55) return false;
  const last = traceparent.charCodeAt(54);
  // The sampled flag is the low bit of the flags byte: of its last hex digit.
  const digit = last <= 57 ? last - 48 : last - 87;
  return (digit & TraceFlags.SAMPLED) === 0;
}

/**
 * The last messages stamped by light spans, and those spans, in a ring.
 * An execution usually starts within a few dozen sends of its message's
 * own, and finds its parent here by the message object, for a few pointer
 * comparisons instead of parsing and checking a `traceparent`. Shared by
 * every server of the process: a message object belongs to one of them only.
 */
const RECENT_SENDS = 64;
const recentMessages: (Message | undefined)[] = new Array<Message | undefined>(RECENT_SENDS).fill(undefined);
const recentSenders: (LightSpan | undefined)[] = new Array<LightSpan | undefined>(RECENT_SENDS).fill(undefined);
let nextRecent = 0;

/** The light span that stamped `message`, if it is a recent one and the message still carries its context. */
function recentSender(message: Message): LightSpan | undefined {
  for (let back = 1; back <= RECENT_SENDS; back++) {
    const at = (nextRecent - back) & (RECENT_SENDS - 1);
    if (recentMessages[at] !== message) continue;
    const span = recentSenders[at]!;
    return message.metadata[TRACEPARENT] === span.traceparent() ? span : undefined;
  }
  return undefined;
}

/** Writes the context of `span` into the metadata of `message`, replacing what was there. */
function stamp(message: Message, span: Span): void {
  const metadata = message.metadata;
  clearTraceContext(metadata);
  if (!(span instanceof LightSpan)) {
    injectMessageMetadata(metadata, trace.setSpan(ROOT_CONTEXT, span));
    return;
  }
  metadata[TRACEPARENT] = span.traceparent();
  if (span.traceState !== '') metadata[TRACESTATE] = span.traceState;
  recentMessages[nextRecent] = message;
  recentSenders[nextRecent] = span;
  nextRecent = (nextRecent + 1) & (RECENT_SENDS - 1);
}

export function createMessageTrace(tracing: Tracing): MessageTrace {
  /** Routes `message` in `span`, which ends when routing does, or at `endAt` (milliseconds since the epoch) for a light span. */
  function routeInSpan(message: Message, span: Span, route: (message: Message) => RouteOutcome, endAt?: number): RouteOutcome {
    stamp(message, span);
    try {
      const outcome = route(message);
      if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.reason });
      return outcome;
    } catch (error) {
      tracing.recordError(span, error);
      throw error;
    } finally {
      if (endAt !== undefined && span instanceof LightSpan) span.endAt(endAt);
      else span.end();
    }
  }

  return {
    sendFromClient(message, parent, route) {
      const caller = trace.getSpanContext(parent);
      if (caller === undefined || !trace.isSpanContextValid(caller)) {
        // Outside any trace, a span starts one; the sampler decides whether it is recorded.
        const root = tracing.startSpan(SPANS.messagesSend, tracing.exporting ? sendAttributeObject(message) : {}, { parent, kind: SpanKind.PRODUCER });
        return routeInSpan(message, root, route);
      }
      const span = tracing.startLightSpan(SPANS.messagesSend, SpanKind.PRODUCER, parentOfContext(caller), sendAttributes(message));
      if (span !== undefined) return routeInSpan(message, span, route);
      clearTraceContext(message.metadata);
      injectMessageMetadata(message.metadata, parent);
      return route(message);
    },

    sendFromAgent(message, incoming, execution, route) {
      if (execution !== undefined) {
        if (execution instanceof LightSpan) {
          // The router takes the message at once (a few microseconds): the span is the instant the execution
          // ended, one clock reading fewer for each end of it.
          const at = execution.hasEnded ? execution.endTime : undefined;
          const span = tracing.startLightSpan(SPANS.messagesSend, SpanKind.PRODUCER, execution, sendAttributes(message), at);
          if (span !== undefined) return routeInSpan(message, span, route, at);
        } else {
          const span = tracing.startLightSpan(SPANS.messagesSend, SpanKind.PRODUCER, parentOfContext(execution.spanContext()), sendAttributes(message));
          if (span !== undefined) return routeInSpan(message, span, route);
        }
      }
      const metadata = message.metadata;
      const traceparent = incoming.metadata[TRACEPARENT];
      const tracestate = incoming.metadata[TRACESTATE];
      // The agent's own trace keys, if it wrote any, never pass: the server's context replaces them.
      if (traceparent !== undefined) metadata[TRACEPARENT] = traceparent;
      else if (metadata[TRACEPARENT] !== undefined) delete metadata[TRACEPARENT];
      if (tracestate !== undefined) metadata[TRACESTATE] = tracestate;
      else if (metadata[TRACESTATE] !== undefined) delete metadata[TRACESTATE];
      return route(message);
    },

    startExecution(agentId, message, at) {
      if (!tracing.exporting || unsampled(message.metadata[TRACEPARENT])) return undefined;
      const parent = recentSender(message) ?? messageParent(message.metadata);
      if (parent !== undefined) {
        // The status and fuel are filled in by `endExecution`, which every execution reaches; listed now, so the list never grows.
        const list = [
          SPAN_ATTRIBUTES.agentId,
          agentId,
          SPAN_ATTRIBUTES.messageId,
          message.message_id,
          SPAN_ATTRIBUTES.messageType,
          message.message_type,
          SPAN_ATTRIBUTES.executionStatus,
          '',
          FUEL_USED_ATTRIBUTE,
          0,
        ];
        return tracing.startLightSpan(SPANS.agentExecute, SpanKind.CONSUMER, parent, list, at);
      }
      const attributes = {
        [SPAN_ATTRIBUTES.agentId]: agentId,
        [SPAN_ATTRIBUTES.messageId]: message.message_id,
        [SPAN_ATTRIBUTES.messageType]: message.message_type,
      };
      // A message without trace context (written before tracing existed) starts a trace; the sampler decides.
      const span = tracing.startSpan(SPANS.agentExecute, attributes, { parent: ROOT_CONTEXT, kind: SpanKind.CONSUMER });
      if (span.isRecording()) return span;
      span.end();
      return undefined;
    },

    endExecution(span, result, at) {
      // The values of `svc_agent_executions_total{status}`.
      span.setAttribute(SPAN_ATTRIBUTES.executionStatus, result.ok ? 'success' : 'error');
      span.setAttribute(FUEL_USED_ATTRIBUTE, Number(result.fuelUsed));
      if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: `${result.failure}: ${result.message}` });
      if (at !== undefined && span instanceof LightSpan) span.endAt(at);
      else span.end();
    },

    executionContext(message, execution) {
      return execution === undefined ? extractMessageMetadata(message.metadata) : trace.setSpan(ROOT_CONTEXT, execution);
    },

    messageContext: (message) => extractMessageMetadata(message.metadata),
  };
}
