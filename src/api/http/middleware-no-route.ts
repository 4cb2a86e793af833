/**
 * Last in the list: reached only when nothing before answered, so no route
 * matches. A path served with other methods says which in `Allow` and in the
 * error's metadata. Both are NOT_FOUND: the error table has no code of its own
 * for a wrong method.
 */
import type { Middleware } from 'koa';
import { SvcError } from '../../errors/svc-error.js';
import type { GatewayState } from './gateway-state.js';

export function noRouteMiddleware(allowed: (path: string) => readonly string[]): Middleware<GatewayState> {
  return async (ctx) => {
    const methods = allowed(ctx.path);
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    if (methods.length === 0 || methods.includes(method)) throw new SvcError('NOT_FOUND', `no route for ${ctx.method} ${ctx.path}`, { method: ctx.method, path: ctx.path });
    ctx.set('Allow', methods.join(', '));
    throw new SvcError('NOT_FOUND', `${ctx.path} does not answer ${ctx.method}; it answers ${methods.join(', ')}`, {
      method: ctx.method,
      path: ctx.path,
      allow: methods.join(','),
    });
  };
}
