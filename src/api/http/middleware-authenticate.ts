/** Authentication: the request's principal, which the routes hand `AgentService` (`client:<principal>`). */
import type { Middleware } from 'koa';
import type { Gate } from '../../security/gate.js';
import type { GatewayState } from './gateway-state.js';

export function authenticateMiddleware(gate: Gate): Middleware<GatewayState> {
  return async (ctx, next) => {
    const call = ctx.state.secured;
    if (call !== undefined) {
      const pending = gate.authenticate(call);
      if (pending !== undefined) await pending;
      if (call.principal !== undefined) ctx.state.principal = call.principal.id;
    }
    await next();
  };
}
