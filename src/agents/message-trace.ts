/**
 * Trace context on the message path: the `svc.messages.send` span of a
 * message accepted for delivery, the `svc.agent.execute` span of each
 * execution, and the W3C context in every message's `metadata` that links
 * them. A client's message, the agent that handles it and the messages that
 * agent sends on are one trace (docs/observability.md, "One trace across
 * hops").
 *
 * Spans are made here only for traces that are recorded (tracing on and the
 * trace sampled): this path carries tens of thousands of messages a second.
 * A trace that is not recorded still travels: its context passes on
 * unchanged (a message an agent sends carries the `traceparent` of the
 * message it handled), which costs two string copies and keeps the trace id
 * in every hop's log lines. A message that carries no context starts a
 * trace, sampled at `message_trace_sample_rate` (telemetry/trace-sampler.ts).
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type HrTime, type Span } from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Message } from '../bus/message.js';
import type { ExecutionResult } from '../sandbox/types.js';
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
   * clock already.
   */
  startExecution(agentId: string, message: Message, at?: number): Span | undefined;
  /** Ends it with the execution's status and fuel (a refused execution is a failed one); `at` as for `startExecution`. */
  endExecution(span: Span, result: ExecutionResult, at?: number): void;
  /** The context of an execution, for what it causes besides messages: log lines, a crash. */
  executionContext(message: Message, execution: Span | undefined): Context;
  /** The context `message` was sent in. */
  messageContext(message: Message): Context;
}

function sendAttributes(message: Message): Attributes {
  return {
    [SPAN_ATTRIBUTES.messageId]: message.message_id,
    [SPAN_ATTRIBUTES.messageType]: message.message_type,
    [SPAN_ATTRIBUTES.messageSender]: message.sender,
    [SPAN_ATTRIBUTES.messageReceiver]: message.receiver,
    [SPAN_ATTRIBUTES.conversationId]: message.conversation_id,
  };
}

/** Removes the keys only when present: `delete` of a missing key would still turn the object into a slow dictionary. */
function clearTraceContext(metadata: Record<string, string>): void {
  if (metadata[TRACEPARENT] !== undefined) delete metadata[TRACEPARENT];
  if (metadata[TRACESTATE] !== undefined) delete metadata[TRACESTATE];
}

/** Writes the context of `ctx` into `message`'s metadata, replacing whatever the sender put there. */
function stamp(message: Message, ctx: Context): void {
  clearTraceContext(message.metadata);
  injectMessageMetadata(message.metadata, ctx);
}

const isSampled = (flags: number): boolean => (flags & TraceFlags.SAMPLED) !== 0;

/** When an SDK span has ended, its end (its `ReadableSpan` side); undefined while it runs. */
function endOf(span: Span): HrTime | undefined {
  const readable = span as Span & Partial<Pick<ReadableSpan, 'ended' | 'endTime'>>;
  return readable.ended === true ? readable.endTime : undefined;
}

const hrTime = (ms: number | undefined): HrTime | undefined => (ms === undefined ? undefined : millisToHrTime(ms));

/**
 * `traceparent`s last found unsampled. An unsampled trace's context passes
 * on unchanged, so most messages of a busy server carry one seen a moment
 * ago, and knowing it spares the propagator's parse at each execution.
 */
const UNSAMPLED_REMEMBERED = 256;

export function createMessageTrace(tracing: Tracing): MessageTrace {
  const unsampled = new Set<string>();

  function rememberUnsampled(traceparent: string): void {
    if (unsampled.size >= UNSAMPLED_REMEMBERED) unsampled.delete(unsampled.values().next().value!);
    unsampled.add(traceparent);
  }

  /** Routes `message` in `span`, which ends when routing does, or at `endTime`. */
  function routeInSpan(message: Message, span: Span, route: (message: Message) => RouteOutcome, endTime?: HrTime): RouteOutcome {
    stamp(message, trace.setSpan(ROOT_CONTEXT, span));
    try {
      const outcome = route(message);
      if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.reason });
      return outcome;
    } catch (error) {
      tracing.recordError(span, error);
      throw error;
    } finally {
      span.end(endTime);
    }
  }

  return {
    sendFromClient(message, parent, route) {
      const caller = trace.getSpanContext(parent);
      const inTrace = caller !== undefined && trace.isSpanContextValid(caller);
      if (inTrace && !(tracing.exporting && isSampled(caller.traceFlags))) {
        stamp(message, parent);
        return route(message);
      }
      // A recorded call's message, or one outside any trace, which starts a trace of its own: the sampler decides.
      const span = tracing.startSpan(SPANS.messagesSend, tracing.exporting ? sendAttributes(message) : {}, { parent, kind: SpanKind.PRODUCER });
      if (span.isRecording()) return routeInSpan(message, span, route);
      stamp(message, trace.setSpan(ROOT_CONTEXT, span));
      return route(message);
    },

    sendFromAgent(message, incoming, execution, route) {
      if (execution !== undefined) {
        // The router takes the message at once: an ended execution's message is sent at the instant it ended.
        const ended = endOf(execution);
        const parent = trace.setSpan(ROOT_CONTEXT, execution);
        const span = tracing.startSpan(SPANS.messagesSend, sendAttributes(message), { parent, kind: SpanKind.PRODUCER, startTime: ended });
        return routeInSpan(message, span, route, ended);
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
      if (!tracing.exporting) return undefined;
      const traceparent = message.metadata[TRACEPARENT];
      if (traceparent !== undefined && unsampled.has(traceparent)) return undefined;
      const parent = extractMessageMetadata(message.metadata);
      const sender = trace.getSpanContext(parent);
      if (sender !== undefined && !isSampled(sender.traceFlags)) {
        rememberUnsampled(traceparent!);
        return undefined;
      }
      const attributes = {
        [SPAN_ATTRIBUTES.agentId]: agentId,
        [SPAN_ATTRIBUTES.messageId]: message.message_id,
        [SPAN_ATTRIBUTES.messageType]: message.message_type,
      };
      // A message without trace context (or with one that is not W3C) starts a trace; the sampler decides.
      const span = tracing.startSpan(SPANS.agentExecute, attributes, { parent, kind: SpanKind.CONSUMER, startTime: hrTime(at) });
      if (span.isRecording()) return span;
      span.end();
      return undefined;
    },

    endExecution(span, result, at) {
      // The values of `svc_agent_executions_total{status}`.
      span.setAttribute(SPAN_ATTRIBUTES.executionStatus, result.ok ? 'success' : 'error');
      span.setAttribute(FUEL_USED_ATTRIBUTE, Number(result.fuelUsed));
      if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: `${result.failure}: ${result.message}` });
      span.end(hrTime(at));
    },

    executionContext(message, execution) {
      return execution === undefined ? extractMessageMetadata(message.metadata) : trace.setSpan(ROOT_CONTEXT, execution);
    },

    messageContext: (message) => extractMessageMetadata(message.metadata),
  };
}
