/**
 * First in the gateway's list: every request runs in its call's context
 * (http-call.ts), so the `svc.api.*` span is active for the route and for
 * `AgentService` below it, and every later step, error body and log line
 * names the same trace id, which the `X-Trace-Id` response header also
 * carries. When the request is answered the span gets its status and the
 * request is counted and logged.
 */
import { context } from '@opentelemetry/api';
import type { Middleware } from 'koa';
import type { DoorTelemetry } from '../api-call.js';
import type { GatewayState } from './gateway-state.js';
import { beginHttpCall } from './http-call.js';
import type { HttpRoute } from './routes.js';

export const TRACE_ID_RESPONSE_HEADER = 'X-Trace-Id';

export function telemetryMiddleware(telemetry: DoorTelemetry, routes: readonly HttpRoute[]): Middleware<GatewayState> {
  return async (ctx, next) => {
    const call = beginHttpCall(telemetry, routes, ctx.req, false);
    ctx.state.call = call.api;
    ctx.state.operation = call.operation;
    ctx.set(TRACE_ID_RESPONSE_HEADER, call.api.answerTraceId);
    try {
      await context.with(call.api.context, next);
    } finally {
      // The error middleware below turned any failure into the answer; it left the error here for the span.
      call.answered(ctx.status, ctx.state.error);
      call.api.end();
    }
  };
}
