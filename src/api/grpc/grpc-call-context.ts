/**
 * The `CallContext` of one gRPC call: who calls, its trace id and the
 * deadline the service should give up at.
 */
import type { Deadline, Metadata } from '@grpc/grpc-js';
import type { CallContext } from '../../agents/agent-service-types.js';
import { isTraceId, newTraceId } from '../../telemetry/trace-ids.js';

/** Request metadata a client may set to join its own trace; also the REST header `X-Trace-Id`. */
export const TRACE_ID_METADATA = 'x-trace-id';
/** W3C Trace Context, read when `x-trace-id` is absent or not a trace id. */
export const TRACEPARENT_METADATA = 'traceparent';

/** Until authentication exists (DESIGN.md section 9) every caller is this principal, so client senders read `client:anonymous`. */
export const ANONYMOUS_PRINCIPAL = 'anonymous';

// version-traceid-parentid-flags (W3C Trace Context, version 00 layout).
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}/;

function text(metadata: Metadata, key: string): string | undefined {
  const [value] = metadata.get(key);
  return typeof value === 'string' ? value.trim().toLowerCase() : undefined;
}

/**
 * The same rule as the REST door: the client's `x-trace-id` when it is a W3C
 * trace id, else the trace id of its `traceparent`, else a new one.
 */
export function traceIdFrom(metadata: Metadata): string {
  const given = text(metadata, TRACE_ID_METADATA);
  if (given !== undefined && isTraceId(given)) return given;
  const parent = TRACEPARENT.exec(text(metadata, TRACEPARENT_METADATA) ?? '')?.[1];
  if (parent !== undefined && isTraceId(parent)) return parent;
  return newTraceId();
}

/** grpc-js gives `Infinity` when the client set no deadline. */
export function deadlineMillis(deadline: Deadline): number {
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

export interface CallContextInput {
  metadata: Metadata;
  /** The client's deadline (`call.getDeadline()`). */
  deadline: Deadline;
  /** The server's own limit for this call (`request_timeout`); omit for streams, which live as long as the client wants. */
  timeoutMs?: number;
  now?: number;
}

/** The context handed to `AgentService`: its deadline is the earlier of the client's and the server's. */
export function callContextFrom(input: CallContextInput): CallContext & { deadline: number } {
  const now = input.now ?? Date.now();
  const serverDeadline = input.timeoutMs === undefined ? Infinity : now + input.timeoutMs;
  return {
    principal: ANONYMOUS_PRINCIPAL,
    trace_id: traceIdFrom(input.metadata),
    deadline: Math.min(deadlineMillis(input.deadline), serverDeadline),
  };
}
