/**
 * Trace context on the message path: the `svc.messages.send` span of a
 * message accepted for delivery, the `svc.agent.execute` span of each
 * execution, and the W3C context in every message's `metadata` that links
 * them. A client's message, the agent that handles it and the messages that
 * agent sends on are one trace (docs/observability.md, "One trace across
 * hops").
 *
 * Spans are made here only for traces that are recorded (tracing on and the
 * trace sampled). This path carries 100k messages a second, where even a
 * span nobody records costs about 0.5 µs and the context around it another
 * 0.6 µs, two of each per message. A trace that is not recorded still
 * travels: its context passes on unchanged (a message an agent sends carries
 * the `traceparent` of the message it handled), which costs two string
 * copies and keeps the trace id in every hop's log lines. A child of an
 * unsampled parent is never sampled (`ParentBased`), so nothing that would
 * have been exported is lost.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span } from '@opentelemetry/api';
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

/** `traceparent` version 00: `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`. */
const TRACEPARENT_LENGTH = 55;
const FLAGS_OFFSET = 53;

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
   * `incoming`'s context passes on).
   */
  sendFromAgent(message: Message, incoming: Message, execution: Span | undefined, route: (message: Message) => RouteOutcome): RouteOutcome;
  /** The `svc.agent.execute` span of handling `message`, child of the context it carries; undefined when that trace is not recorded. */
  startExecution(agentId: string, message: Message): Span | undefined;
  /** Ends it with the execution's status and fuel (a refused execution is a failed one). */
  endExecution(span: Span, result: ExecutionResult): void;
  /** The context of an execution, for what it causes besides messages: log lines, a crash. */
  executionContext(message: Message, execution: Span | undefined): Context;
  /** The context `message` was sent in. */
  messageContext(message: Message): Context;
}

function sendAttributes(message: Message) {
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

export function createMessageTrace(tracing: Tracing): MessageTrace {
  /** Whether spans under this `traceparent` are recorded; a missing or unusual one is left to the sampler. */
  function recorded(traceparent: string | undefined): boolean {
    if (!tracing.exporting) return false;
    if (traceparent === undefined || traceparent.length !== TRACEPARENT_LENGTH) return true;
    return (parseInt(traceparent.slice(FLAGS_OFFSET), 16) & TraceFlags.SAMPLED) !== 0;
  }

  function routeInSpan(message: Message, parent: Context, route: (message: Message) => RouteOutcome): RouteOutcome {
    const span = tracing.startSpan(SPANS.messagesSend, tracing.exporting ? sendAttributes(message) : {}, { parent, kind: SpanKind.PRODUCER });
    clearTraceContext(message.metadata);
    injectMessageMetadata(message.metadata, trace.setSpan(parent, span));
    try {
      const outcome = route(message);
      if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.reason });
      return outcome;
    } catch (error) {
      tracing.recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  return {
    sendFromClient(message, parent, route) {
      const caller = trace.getSpanContext(parent);
      // Outside any trace, a span starts one; inside a recorded trace, it is recorded too.
      if (caller === undefined || !trace.isSpanContextValid(caller) || (tracing.exporting && (caller.traceFlags & TraceFlags.SAMPLED) !== 0)) {
        return routeInSpan(message, parent, route);
      }
      clearTraceContext(message.metadata);
      injectMessageMetadata(message.metadata, parent);
      return route(message);
    },

    sendFromAgent(message, incoming, execution, route) {
      if (execution !== undefined) return routeInSpan(message, trace.setSpan(ROOT_CONTEXT, execution), route);
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

    startExecution(agentId, message) {
      if (!recorded(message.metadata[TRACEPARENT])) return undefined;
      return tracing.startSpan(
        SPANS.agentExecute,
        {
          [SPAN_ATTRIBUTES.agentId]: agentId,
          [SPAN_ATTRIBUTES.messageId]: message.message_id,
          [SPAN_ATTRIBUTES.messageType]: message.message_type,
        },
        { parent: extractMessageMetadata(message.metadata), kind: SpanKind.CONSUMER },
      );
    },

    endExecution(span, result) {
      // The values of `svc_agent_executions_total{status}`.
      span.setAttribute(SPAN_ATTRIBUTES.executionStatus, result.ok ? 'success' : 'error');
      span.setAttribute(FUEL_USED_ATTRIBUTE, Number(result.fuelUsed));
      if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: `${result.failure}: ${result.message}` });
      span.end();
    },

    executionContext(message, execution) {
      return execution === undefined ? extractMessageMetadata(message.metadata) : trace.setSpan(ROOT_CONTEXT, execution);
    },

    messageContext: (message) => extractMessageMetadata(message.metadata),
  };
}
