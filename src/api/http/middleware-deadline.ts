/**
 * server.request_timeout as a deadline: passed to the service in the
 * CallContext, and enforced here so a call that overruns answers
 * DEADLINE_EXCEEDED instead of holding the connection.
 */
import type { Middleware } from 'koa';
import type { Clock, TimerHandle } from '../../../supervisors/index.js';
import { SvcError } from '../../errors/svc-error.js';
import type { GatewayState } from './gateway-state.js';

export function deadlineMiddleware(timeoutMs: number, clock: Clock): Middleware<GatewayState> {
  return async (ctx, next) => {
    ctx.state.deadline = Date.now() + timeoutMs;
    let timer: TimerHandle | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = clock.setTimeout(() => reject(new SvcError('DEADLINE_EXCEEDED', `no answer within ${timeoutMs} ms`, { timeout_ms: String(timeoutMs) })), timeoutMs);
    });
    try {
      await Promise.race([next(), expired]);
    } finally {
      clock.clearTimeout(timer);
    }
  };
}
