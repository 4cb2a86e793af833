/** First in the list: every later step, and every error body, can name the call's trace id. */
import type { Middleware } from 'koa';
import type { GatewayState } from './gateway-state.js';
import { traceIdFrom } from './trace-id.js';

export function traceIdMiddleware(): Middleware<GatewayState> {
  return (ctx, next) => {
    const traceId = traceIdFrom(ctx.req.headers);
    ctx.state.traceId = traceId;
    ctx.set('X-Trace-Id', traceId);
    return next();
  };
}
