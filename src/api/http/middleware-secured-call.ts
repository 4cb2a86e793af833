/**
 * Starts the security pipeline of a request: names the operation its route
 * serves and reads what it presents (http-security.ts) into
 * `ctx.state.secured`, which the steps after it work on.
 */
import type { Middleware } from 'koa';
import type { Security } from '../../security/security.js';
import type { GatewayState } from './gateway-state.js';
import { operationOfRoute, securedCallOf } from './http-security.js';
import { findRoute, type HttpRoute } from './routes.js';

export function securedCallMiddleware(security: Security, routes: readonly HttpRoute[]): Middleware<GatewayState> {
  return async (ctx, next) => {
    const found = findRoute(routes, ctx.method, ctx.path);
    const operation = found === undefined ? undefined : operationOfRoute(found.route, false);
    if (operation !== undefined) ctx.state.secured = securedCallOf(ctx.req, operation, ctx.state.call.answerTraceId, security.apiKeyHeader);
    await next();
  };
}
