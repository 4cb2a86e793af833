/**
 * The audit step: once the route answered, records the outcome of a change
 * (deploy, undeploy, key changes, lockdown) with what it acted on.
 */
import type { Middleware } from 'koa';
import type { Gate } from '../../security/gate.js';
import { asSvcError } from './error-body.js';
import type { GatewayState } from './gateway-state.js';

function resourceOf(params: Record<string, string> | undefined, body: unknown): string {
  const agentId = params?.agent_id ?? (typeof body === 'object' && body !== null ? (body as Record<string, unknown>).agent_id : undefined);
  return typeof agentId === 'string' ? agentId : '';
}

export function auditMiddleware(gate: Gate): Middleware<GatewayState> {
  return async (ctx, next) => {
    const call = ctx.state.secured;
    if (call === undefined) return next();
    try {
      await next();
    } catch (err) {
      if (call.resource === '') call.resource = resourceOf((ctx as { params?: Record<string, string> }).params, undefined);
      gate.completed(call, asSvcError(err));
      throw err;
    }
    if (call.resource === '') call.resource = resourceOf((ctx as { params?: Record<string, string> }).params, ctx.body);
    gate.completed(call, undefined);
  };
}
