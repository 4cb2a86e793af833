/**
 * Last in the list: reached only when nothing before answered. A path no
 * route serves is 404 NOT_FOUND. A path served with other methods is 405
 * with `Allow` (RFC 9110 section 15.5.6), as HTTP clients expect; its body
 * is the usual Error with the code NOT_FOUND (the error table has no code for
 * a wrong method, and the code is the one the gRPC door gives an unknown
 * method), `reason: method_not_allowed` and the methods in `allow`
 * (docs/adr/0002-method-not-allowed.md).
 */
import type { Middleware } from 'koa';
import { SvcError } from '../../errors/svc-error.js';
import { httpError } from './error-body.js';
import type { GatewayState } from './gateway-state.js';

/** `methods` as `Allow` lists them: HEAD wherever GET is served (Koa answers it), sorted. */
export function allowHeader(methods: readonly string[]): string {
  const all = new Set(methods);
  if (all.has('GET')) all.add('HEAD');
  return [...all].sort().join(', ');
}

export function noRouteMiddleware(allowed: (path: string) => readonly string[]): Middleware<GatewayState> {
  return async (ctx) => {
    const methods = allowed(ctx.path);
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    if (methods.length === 0 || methods.includes(method)) throw new SvcError('NOT_FOUND', `no route for ${ctx.method} ${ctx.path}`, { method: ctx.method, path: ctx.path });
    const allow = allowHeader(methods);
    const error = new SvcError('NOT_FOUND', `${ctx.path} does not answer ${ctx.method}; it answers ${allow}`, {
      reason: 'method_not_allowed',
      method: ctx.method,
      path: ctx.path,
      allow: allow.replaceAll(' ', ''),
    });
    // Answered here rather than thrown: the error middleware gives each code the status of the error table.
    ctx.state.error = error;
    ctx.status = 405;
    ctx.set('Allow', allow);
    // The rest of a body that has not all arrived would be read as the next request.
    if (!ctx.req.complete) ctx.set('Connection', 'close');
    ctx.body = httpError(error, ctx.state.call.answerTraceId).body;
  };
}
