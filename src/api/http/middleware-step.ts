/**
 * One security step (src/security/gate.ts) as Koa middleware: it runs on
 * the request's `SecuredCall` and lets the request on, or throws the step's
 * refusal for the error middleware to answer. Requests that are no
 * operation (probes, docs, unknown paths) carry no call and pass.
 */
import type { Middleware } from 'koa';
import type { Step } from '../../security/gate.js';
import type { GatewayState } from './gateway-state.js';

export function stepMiddleware(step: Step): Middleware<GatewayState> {
  return async (ctx, next) => {
    const call = ctx.state.secured;
    if (call !== undefined) {
      const pending = step(call);
      if (pending !== undefined) await pending;
    }
    await next();
  };
}
