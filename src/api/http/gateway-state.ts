/**
 * What the middleware leave on `ctx.state` for the routes, and the
 * CallContext built from it. The authenticate middleware sets `principal`.
 */
import type { CallContext } from '../../agents/agent-service-types.js';
import type { SvcError } from '../../errors/svc-error.js';
import type { SecuredCall } from '../../security/gate.js';
import type { ApiOperation } from '../../telemetry/span-names.js';
import { ANONYMOUS_PRINCIPAL, type ApiCall } from '../api-call.js';

export interface GatewayState {
  /** Set by the telemetry middleware, first in the list: the request's span and trace id. */
  call: ApiCall;
  /** The RPC the request's route serves; undefined for probes, docs and unknown paths. */
  operation?: ApiOperation;
  /** Epoch milliseconds, set by the deadline middleware. */
  deadline?: number;
  principal?: string;
  /** The call as the security middleware see it; undefined for probes, docs, unknown paths and a gateway without security. */
  secured?: SecuredCall;
  /** The failure the error middleware answered with, for the span and the access line. */
  error?: SvcError;
}

export function callContext(state: GatewayState): CallContext {
  const ctx: CallContext = { principal: state.principal ?? ANONYMOUS_PRINCIPAL, trace_id: state.call.answerTraceId };
  if (state.deadline !== undefined) ctx.deadline = state.deadline;
  return ctx;
}
