/**
 * What a management call is to telemetry, whichever door it came through.
 * The gRPC interceptor and the REST middleware (and the WebSocket upgrade)
 * each turn their protocol into the calls below, so both doors follow one
 * rule:
 *
 * - the parent is what the caller sent (`traceparent`/`tracestate`, and
 *   `x-trace-id` over them, extracted by src/telemetry/trace-context.ts);
 * - an RPC runs in a SERVER span named from `API_SPANS`, active for all the
 *   work it starts, so the spans `AgentService` makes below it are its
 *   children and `trace_id` everywhere (error bodies, `svc-error-bin`,
 *   Health, `X-Trace-Id`, log lines) is that span's trace id; only when the
 *   client's `x-trace-id` is not a W3C trace id do the answers echo it as
 *   sent (`answerTraceId`) while the span and the log lines have their own;
 * - a request that is no RPC (a probe, the docs, a path no route answers)
 *   exports no span, but still runs in a context with the caller's trace id
 *   (or a new one), so its error body and log lines name a trace all the same;
 * - one access line per call, at debug (see `logAccess`).
 */
import { context, SpanKind, trace, TraceFlags, type Attributes, type Context, type Span } from '@opentelemetry/api';
import type { CallContext } from '../agents/agent-service-types.js';
import type { SvcError } from '../errors/svc-error.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { API_SPANS, SPAN_ATTRIBUTES, type ApiOperation } from '../telemetry/span-names.js';
import { echoedTraceId, traceIdOrNew } from '../telemetry/trace-context.js';
import { newSpanId } from '../telemetry/trace-ids.js';
import { createTracing, type Tracing } from '../telemetry/tracing.js';
import { VERSION } from '../version.js';

/** Until authentication exists (DESIGN.md section 9) every caller is this principal, so client senders read `client:anonymous`. */
export const ANONYMOUS_PRINCIPAL = 'anonymous';

/** What a door needs to trace, count and log its calls; the composition root passes the server's own. */
export interface DoorTelemetry {
  tracing: Tracing;
  /** Without it nothing is counted (a door built alone, in a test). */
  metrics?: Metrics;
  log?: Logger;
}

/**
 * The tracer of a door built without the server's (tests, benchmarks of the
 * door alone): tracing off, so calls still get span and trace ids and nothing
 * is recorded or exported. Each door gets its own; doors share nothing.
 */
export function untracedTracing(): Tracing {
  return createTracing(
    {
      enable_tracing: false,
      otlp_endpoint: '',
      otlp_timeout: 0,
      otlp_headers: {},
      trace_sample_rate: 0,
      message_trace_sample_rate: 0,
      service_name: 'svc',
      service_version: VERSION,
      deployment_environment: '',
    },
    { serviceVersion: VERSION },
  );
}

export interface ApiCall {
  /** The context to run the call's work in: its span is active there. */
  readonly context: Context;
  readonly span: Span;
  /** The trace id of the call's span: the one its log lines and the trace backend name. */
  readonly traceId: string;
  /** The trace id its answers name (error bodies, Health, `X-Trace-Id`): the client's `x-trace-id` as sent, else `traceId`. */
  readonly answerTraceId: string;
  /** The failure recorded on the span, if any. */
  readonly failure: SvcError | undefined;
  /** Marks the span failed (status ERROR, exception event, `svc.error.code`); the first failure wins. */
  fail(error: SvcError): void;
  /** Ends the span. Idempotent: a stream can end from both sides at once. */
  end(): void;
}

/** A class rather than a closure: one is made per request, on the hot path of both doors. */
class CallSpan implements ApiCall {
  readonly context: Context;
  readonly traceId: string;
  readonly answerTraceId: string;
  failure: SvcError | undefined = undefined;
  private ended = false;

  constructor(
    private readonly tracing: Tracing,
    readonly span: Span,
    parent: Context,
  ) {
    this.context = trace.setSpan(parent, span);
    this.traceId = span.spanContext().traceId;
    const echoed = echoedTraceId(parent);
    this.answerTraceId = echoed ?? this.traceId;
    // A client's id that is no W3C trace id names no trace: the span keeps it, so the trace can be found by it.
    if (echoed !== undefined && echoed.toLowerCase() !== this.traceId && span.isRecording()) span.setAttribute(SPAN_ATTRIBUTES.clientTraceId, echoed);
  }

  fail(error: SvcError): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    this.tracing.recordError(this.span, error);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.span.end();
  }
}

/**
 * Starts the call's span under `parent`. `operation` undefined: the request
 * is no RPC, and gets a non-recording span that only carries the trace id.
 */
export function beginCall(tracing: Tracing, operation: ApiOperation | undefined, parent: Context, attributes: Attributes): ApiCall {
  const span =
    operation === undefined
      ? trace.wrapSpanContext({ traceId: traceIdOrNew(parent), spanId: newSpanId(), traceFlags: TraceFlags.NONE })
      : tracing.startSpan(API_SPANS[operation], attributes, { parent, kind: SpanKind.SERVER });
  return new CallSpan(tracing, span, parent);
}

/** The operation of an RPC name, or undefined for a name that is none of ours. */
export function apiOperation(rpc: string): ApiOperation | undefined {
  return Object.hasOwn(API_SPANS, rpc) ? (rpc as ApiOperation) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/**
 * The span attributes a request names (docs/observability.md, the table of
 * spans). Both doors hand the request in the proto's snake_case shape, so
 * one reading serves both. Only identifiers: never a module, never content.
 */
export function describeRequest(span: Span, operation: ApiOperation | undefined, request: unknown): void {
  if (operation === undefined || !span.isRecording()) return;
  const attributes: Attributes = {};
  switch (operation) {
    case 'DeployAgent':
      attributes[SPAN_ATTRIBUTES.agentName] = text(field(request, 'name'));
      break;
    case 'UndeployAgent':
    case 'GetAgent':
    case 'RestartAgent':
    case 'UpdateAgent':
    case 'GetAgentLogs':
    case 'FollowAgentLogs':
      attributes[SPAN_ATTRIBUTES.agentId] = text(field(request, 'agent_id'));
      break;
    case 'SendMessage':
    case 'CallAgent':
      attributes[SPAN_ATTRIBUTES.messageReceiver] = text(field(field(request, 'message'), 'receiver'));
      break;
    case 'SubscribeMessages':
    case 'RecentMessages':
      attributes[SPAN_ATTRIBUTES.agentId] = text(field(field(request, 'filter'), 'agent_id'));
      break;
    default:
      return;
  }
  span.setAttributes(attributes);
}

/** What only the answer tells: the id of a deployed agent. */
export function describeResponse(span: Span, operation: ApiOperation | undefined, response: unknown): void {
  if (operation !== 'DeployAgent' || !span.isRecording()) return;
  const agentId = text(field(response, 'agent_id'));
  if (agentId !== undefined) span.setAttribute(SPAN_ATTRIBUTES.agentId, agentId);
}

/** The `CallContext` handed to `AgentService`: the trace id is the active span's (or the client's own, echoed), as the call's other answers name it. */
export function callContext(deadline?: number, principal: string = ANONYMOUS_PRINCIPAL): CallContext {
  const active = context.active();
  const ctx: CallContext = { principal, trace_id: echoedTraceId(active) ?? traceIdOrNew(active) };
  if (deadline !== undefined) ctx.deadline = deadline;
  return ctx;
}

/**
 * One access line per call, at debug: a busy server answers a request per
 * message sent, and an info line for each would outweigh every other line
 * (and cost each call a JSON encode). Operators turn them on with
 * `log_level = "debug"` and thin them with `debug_sample_rate`; failures the
 * server caused are also logged at error with the same `trace_id`. Callers
 * pass only fixed fields (operation, route template, status, code, time,
 * trace id): never headers, bodies, modules or message content. The fields
 * are built only when the line will be written.
 */
export function logAccess(log: Logger | undefined, msg: string, fields: () => Record<string, unknown>): void {
  if (log === undefined || !log.debug()) return;
  log.debug(fields(), msg);
}

/** For an access line: the client's own trace id, when its answers echoed one the trace does not have. */
export function clientTraceId(call: ApiCall): { client_trace_id?: string } {
  return call.answerTraceId === call.traceId ? {} : { client_trace_id: call.answerTraceId };
}

/** Milliseconds since `startedAt` (a `performance.now()` reading), to the microsecond, for access lines. */
export function elapsedMs(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 1000) / 1000;
}
