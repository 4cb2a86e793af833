/**
 * The HTTP listener's side of api-call.ts: a request begins with its span
 * (named from the route's RPC; none for probes, docs and unknown paths) and
 * is answered once, which sets the span's HTTP attributes, counts
 * `svc_http_requests_total` and `svc_http_request_duration_seconds`, and
 * writes the access line. Koa requests go through middleware-telemetry.ts,
 * WebSocket upgrades through websocket-gateway.ts; both use this, so the two
 * entry points of the listener follow one rule.
 */
import type { IncomingMessage } from 'node:http';
import type { SvcError } from '../../errors/svc-error.js';
import { SPAN_ATTRIBUTES, type ApiOperation } from '../../telemetry/span-names.js';
import { extractHttpHeaders } from '../../telemetry/trace-context.js';
import { apiOperation, beginCall, clientTraceId, elapsedMs, logAccess, type ApiCall, type DoorTelemetry } from '../api-call.js';
import { findRoute, operationName, type HttpRoute } from './routes.js';

export interface HttpCall {
  readonly api: ApiCall;
  /** The API route the request matched, with its path variables; undefined for anything else. */
  readonly found: { route: HttpRoute; params: Record<string, string> } | undefined;
  readonly operation: ApiOperation | undefined;
  /** Records the answer (status, and the error when it failed). Once; a WebSocket's span ends later, at close. */
  answered(status: number, error?: SvcError): void;
}

/**
 * The operation a route serves. A plain GET of a streaming RPC is its own
 * operation (`RecentMessages`, `GetAgentLogs`); over WebSocket it is the stream.
 */
export function operationOf(route: HttpRoute, upgrade: boolean): ApiOperation | undefined {
  return apiOperation(operationName(route, upgrade));
}

export function beginHttpCall(telemetry: DoorTelemetry, routes: readonly HttpRoute[], req: IncomingMessage, upgrade: boolean): HttpCall {
  const startedAt = performance.now();
  const method = req.method ?? 'GET';
  const path = pathOf(req.url);
  const found = findRoute(routes, method, path);
  const operation = found === undefined ? undefined : operationOf(found.route, upgrade);
  const api = beginCall(
    telemetry.tracing,
    operation,
    extractHttpHeaders(req.headers),
    found === undefined ? {} : { [SPAN_ATTRIBUTES.httpMethod]: method, [SPAN_ATTRIBUTES.httpRoute]: found.route.template },
  );
  let answered = false;

  return {
    api,
    found,
    operation,
    answered(status, error) {
      if (answered) return;
      answered = true;
      if (error !== undefined) api.fail(error);
      if (api.span.isRecording()) api.span.setAttribute(SPAN_ATTRIBUTES.httpStatusCode, status);
      telemetry.metrics?.recordHttpRequest(method, status, (performance.now() - startedAt) / 1000);
      logAccess(telemetry.log, 'http request', () => ({
        method,
        path,
        route: found?.route.template,
        status,
        code: api.failure?.code,
        duration_ms: elapsedMs(startedAt),
        trace_id: api.traceId,
        ...clientTraceId(api),
      }));
    },
  };
}

/** The path of a request target, without its query: a query may carry what a log must not. */
export function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
