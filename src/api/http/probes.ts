/**
 * The orchestrator's probes, outside /api/v1 on the HTTP listener: `GET
 * /health` (liveness: the process answers) and `GET /ready` (readiness: store,
 * executors and listeners up, not starting, not draining). A load balancer
 * stops sending work on the 503 of /ready while in-flight calls finish.
 */
import type { Middleware } from 'koa';
import { SvcError } from '../../errors/svc-error.js';
import type { GatewayState } from './gateway-state.js';

export interface Readiness {
  ready: boolean;
  /** Why not, when not: `starting`, `draining`, `store closed`, ... */
  reason?: string;
}

export const PROBE_PATHS: readonly string[] = ['/health', '/ready'];

export function probesMiddleware(readiness: () => Readiness): Middleware<GatewayState> {
  return (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !PROBE_PATHS.includes(ctx.path)) return next();
    if (ctx.path === '/health') {
      ctx.body = { status: 'ok' };
      return undefined;
    }
    const state = readiness();
    if (!state.ready) {
      const reason = state.reason ?? 'not ready';
      throw new SvcError('UNAVAILABLE', `not ready: ${reason}`, { reason });
    }
    ctx.body = { status: 'ready' };
    return undefined;
  };
}
