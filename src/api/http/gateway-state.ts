/**
 * What the middleware leave on `ctx.state` for the routes, and the
 * CallContext built from it. Auth (a later issue) sets `principal`.
 */
import type { CallContext } from '../../agents/agent-service-types.js';

/** The principal of calls made without authentication (security.auth_enabled off). */
export const ANONYMOUS_PRINCIPAL = 'anonymous';

export interface GatewayState {
  /** Set by the trace-id middleware, first in the list. */
  traceId: string;
  /** Epoch milliseconds, set by the deadline middleware. */
  deadline?: number;
  principal?: string;
}

export function callContext(state: GatewayState): CallContext {
  const ctx: CallContext = { principal: state.principal ?? ANONYMOUS_PRINCIPAL, trace_id: state.traceId };
  if (state.deadline !== undefined) ctx.deadline = state.deadline;
  return ctx;
}
