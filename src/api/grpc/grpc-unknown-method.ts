/**
 * A call to a method no service on the server has. grpc-js answers it from
 * the server itself, before any interceptor runs: UNIMPLEMENTED, as the gRPC
 * protocol says (clients such as reflection tools rely on that code), but
 * with no metadata. Every gRPC error carries `svc-error-bin` (DESIGN.md
 * section 4), so this wraps the server's answer to add it: `NOT_FOUND`, the
 * code the REST door gives an unknown route, with the method named and the
 * call's trace id (the client's `x-trace-id` as sent, else its `traceparent`'s,
 * else a new one). The call is counted and logged as every other call is.
 *
 * grpc-js 1.14 (pinned, DESIGN.md section 8) has no option for this; its
 * private `_verifyContentType(stream, headers)` and
 * `_respondWithError(status, stream, …)` are what the server calls for every
 * request and for an unknown method, one after the other on the same event.
 * test/api/grpc/grpc-unknown-method.test.ts guards both.
 */
import { Metadata, status as GrpcStatus, type Server, type StatusObject } from '@grpc/grpc-js';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { SvcError } from '../../errors/svc-error.js';
import { grpcStatusLabel } from '../../telemetry/metric-catalog.js';
import { extractGrpcMetadata } from '../../telemetry/trace-context.js';
import { beginCall, clientTraceId, elapsedMs, logAccess, type DoorTelemetry } from '../api-call.js';
import { toGrpcStatus } from './grpc-errors.js';

/** The two private methods of grpc-js's Server this file wraps. */
interface ServerInternals {
  _verifyContentType(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): boolean;
  _respondWithError(status: Partial<StatusObject>, stream: ServerHttp2Stream, channelzSessionInfo?: unknown): void;
}

function internalsOf(server: Server): ServerInternals {
  const internals = server as unknown as Partial<ServerInternals>;
  if (typeof internals._verifyContentType !== 'function' || typeof internals._respondWithError !== 'function') {
    // A grpc-js whose internals moved: fail at start, not with trailer-less errors in production.
    throw new Error('grpc-js Server internals changed: _verifyContentType/_respondWithError not found');
  }
  return internals as ServerInternals;
}

export function answerUnknownMethods(server: Server, telemetry: DoorTelemetry): void {
  const internals = internalsOf(server);
  const verifyContentType = internals._verifyContentType.bind(server);
  const respondWithError = internals._respondWithError.bind(server);
  // The request being routed: grpc-js passes its headers to the content check, not to the error answer that
  // follows in the same synchronous step. One slot, overwritten by every request: nothing allocated per request.
  let routedStream: ServerHttp2Stream | undefined;
  let routedHeaders: IncomingHttpHeaders | undefined;

  internals._verifyContentType = (stream, headers) => {
    const ok = verifyContentType(stream, headers);
    routedStream = stream;
    routedHeaders = headers;
    return ok;
  };

  internals._respondWithError = (status, stream, channelzSessionInfo) => {
    const headers = routedStream === stream ? routedHeaders : undefined;
    routedStream = routedHeaders = undefined;
    if (status.code !== GrpcStatus.UNIMPLEMENTED || headers === undefined) return respondWithError(status, stream, channelzSessionInfo);
    const startedAt = performance.now();
    const path = String(headers[':path'] ?? '');
    const call = beginCall(telemetry.tracing, undefined, extractGrpcMetadata(Metadata.fromHttp2Headers(headers)), {});
    const error = new SvcError('NOT_FOUND', `unknown method ${path}`, { reason: 'unknown_method', method: path });
    const trailer = toGrpcStatus(error, call.answerTraceId);
    call.end();
    respondWithError({ code: GrpcStatus.UNIMPLEMENTED, details: trailer.details, metadata: trailer.metadata }, stream, channelzSessionInfo);
    telemetry.metrics?.recordGrpcCall(path, GrpcStatus.UNIMPLEMENTED, (performance.now() - startedAt) / 1000);
    logAccess(telemetry.log, 'grpc call', () => ({
      rpc: path,
      status: grpcStatusLabel(GrpcStatus.UNIMPLEMENTED),
      code: error.code,
      duration_ms: elapsedMs(startedAt),
      trace_id: call.traceId,
      ...clientTraceId(call),
    }));
  };
}
