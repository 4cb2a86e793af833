/**
 * The `CallContext` of one gRPC call: who calls, its trace id (the call's
 * span, made active by the telemetry interceptor) and the deadline the
 * service should give up at.
 */
import type { Deadline } from '@grpc/grpc-js';
import type { CallContext } from '../../agents/agent-service-types.js';
import { callContext } from '../api-call.js';

/** grpc-js gives `Infinity` when the client set no deadline. */
export function deadlineMillis(deadline: Deadline): number {
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

export interface CallContextInput {
  /** The client's deadline (`call.getDeadline()`). */
  deadline: Deadline;
  /** The server's own limit for this call (`request_timeout`); omit for streams, which live as long as the client wants. */
  timeoutMs?: number;
  now?: number;
  /** Who is calling, once the security interceptors authenticated the call. */
  principal?: string | undefined;
}

/** The context handed to `AgentService`: its deadline is the earlier of the client's and the server's. */
export function callContextFrom(input: CallContextInput): CallContext & { deadline: number } {
  const now = input.now ?? Date.now();
  const serverDeadline = input.timeoutMs === undefined ? Infinity : now + input.timeoutMs;
  return { ...callContext(undefined, input.principal), deadline: Math.min(deadlineMillis(input.deadline), serverDeadline) };
}
