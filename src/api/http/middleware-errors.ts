/**
 * Turns whatever the later steps throw into the `svc.v1.Error` body with the
 * status of the error table. INTERNAL failures are logged with their stack
 * and answered without it.
 */
import type { Middleware } from 'koa';
import type { Logger } from '../../telemetry/logger.js';
import { asSvcError, httpError } from './error-body.js';
import type { GatewayState } from './gateway-state.js';
import { TRACE_ID_RESPONSE_HEADER } from './middleware-telemetry.js';

export function errorMiddleware(log?: Logger): Middleware<GatewayState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const { traceId, answerTraceId } = ctx.state.call;
      const error = asSvcError(err);
      ctx.state.error = error;
      if (error.code === 'INTERNAL') log?.error({ err, trace_id: traceId, method: ctx.method, path: ctx.path }, 'request failed');
      // A streamed body already sent its headers; the socket is all that is left to close.
      if (ctx.headerSent) {
        ctx.req.socket.destroy();
        return;
      }
      const answer = httpError(error, answerTraceId);
      ctx.status = answer.status;
      ctx.set(answer.headers);
      ctx.set(TRACE_ID_RESPONSE_HEADER, answerTraceId);
      // The rest of a body that has not all arrived (a deadline, a refusal before reading it) would be read as the next request.
      if (!ctx.req.complete) ctx.set('Connection', 'close');
      ctx.body = answer.body;
    }
  };
}
