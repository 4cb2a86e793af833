/**
 * Early in the list: refuses a request whose target the gateway cannot read,
 * before any step reads `ctx.path`. Node's parser lets through an absolute-form
 * target that its URL parser then rejects (`GET http://[::1 HTTP/1.1`), and
 * an HTTP/1.1 request without `Host` (RFC 9112 section 3.2 wants a 400): Node
 * would answer the first with a bare 500 from Koa and the second with a bare
 * 400, so the server turns its own Host check off and this one answers both
 * with an Error body.
 */
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { SvcError } from '../../errors/svc-error.js';
import type { GatewayState } from './gateway-state.js';

/** Throws when an HTTP/1.1 request has no `Host`; the WebSocket gateway checks its upgrades with it too. */
export function requireHost(req: IncomingMessage): void {
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
    throw new SvcError('INVALID_ARGUMENT', 'an HTTP/1.1 request must have a Host header', { field: 'Host', reason: 'missing_host' });
  }
}

export function requestTargetMiddleware(): Middleware<GatewayState> {
  return (ctx, next) => {
    requireHost(ctx.req);
    try {
      // Koa parses the target on first use and caches it; every later step reads the cached parse.
      void ctx.path;
    } catch {
      throw new SvcError('INVALID_ARGUMENT', 'malformed request target', { reason: 'invalid_url' });
    }
    return next();
  };
}
