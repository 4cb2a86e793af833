/**
 * The gRPC door's telemetry, one grpc-js server interceptor in front of
 * every call: the `svc.api.*` SERVER span (parent from the request
 * metadata), `svc_grpc_*` metrics, `x-trace-id` on the response headers and
 * one access line (api-call.ts has the rules both doors share).
 *
 * grpc-js runs a unary or server-streaming handler synchronously inside the
 * listener's half-close, so running that callback in the span's context
 * makes the span active for the handler and for everything it awaits: the
 * spans `AgentService` starts are children of the call's span.
 *
 * A call ends once: at the status it ends with, or at grpc-js's cancel
 * notice, which follows every call and stands alone when the client
 * cancelled or the transport deadline passed.
 *
 * grpc-js refuses some requests itself (no protobuf, a bad compression, a
 * malformed `grpc-timeout`, no or two request messages) with a status sent
 * straight from its base call, past every interceptor's `sendStatus`. The
 * only place that sees those is the base call's own `sendStatus`, so this
 * interceptor wraps it: such a status becomes our error with its
 * `svc-error-bin` trailer (grpc-errors.ts `transportError` says which), and
 * every status, ours or grpc-js's, ends the call's telemetry there.
 */
import { context, SpanStatusCode } from '@opentelemetry/api';
import { Metadata, ServerInterceptingCall, status as GrpcStatus, type ServerInterceptor, type StatusObject } from '@grpc/grpc-js';
import { SvcError } from '../../errors/svc-error.js';
import { newTraceId } from '../../telemetry/trace-ids.js';
import { grpcMethodLabel, grpcStatusLabel } from '../../telemetry/metric-catalog.js';
import { RPC_SERVICE, RPC_SYSTEM_GRPC, SPAN_ATTRIBUTES } from '../../telemetry/span-names.js';
import { extractGrpcMetadata, TRACE_ID_HEADER } from '../../telemetry/trace-context.js';
import { apiOperation, beginCall, clientTraceId, describeRequest, describeResponse, elapsedMs, logAccess, type ApiCall, type DoorTelemetry } from '../api-call.js';
import { deadlineMillis } from './grpc-call-context.js';
import { ERROR_TRAILER, errorFromStatus, toGrpcStatus, transportError } from './grpc-errors.js';

const SERVICE_PREFIX = `/${RPC_SERVICE}/`;

/** The RPC name of a management method path; undefined for other services on the server (reflection). */
function rpcOf(path: string): string | undefined {
  return path.startsWith(SERVICE_PREFIX) ? path.slice(SERVICE_PREFIX.length) : undefined;
}

/** Codes that mean the server failed, not that the caller asked for something it cannot have (OpenTelemetry's rule for gRPC server spans). */
const SERVER_FAULTS: ReadonlySet<number> = new Set([
  GrpcStatus.UNKNOWN,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.UNIMPLEMENTED,
  GrpcStatus.INTERNAL,
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DATA_LOSS,
]);

export function telemetryInterceptor(telemetry: DoorTelemetry): ServerInterceptor {
  const { tracing, metrics, log } = telemetry;

  return (method, next) => {
    const rpc = rpcOf(method.path);
    const operation = rpc === undefined ? undefined : apiOperation(rpc);
    // Streams get no duration histogram; only ours count as open streams (not reflection's).
    const streaming = method.responseStream || method.requestStream;
    const openStream = streaming && operation !== undefined;
    const startedAt = performance.now();
    let call: ApiCall | undefined;
    let finished = false;
    /** The service began its answer: a status grpc-js sends after that is about the response, not the request. */
    let answered = false;

    function finish(status: Pick<StatusObject, 'code' | 'details' | 'metadata'> | undefined): void {
      if (finished || call === undefined) return;
      finished = true;
      // No status: the call ended without the application answering (see the file comment).
      const code = status?.code ?? (Date.now() >= deadlineMillis(next.getDeadline()) ? GrpcStatus.DEADLINE_EXCEEDED : GrpcStatus.CANCELLED);
      const span = call.span;
      if (code !== GrpcStatus.OK && status !== undefined) {
        // The svc-error-bin trailer is what the client reads; the span records the same error.
        const body = errorFromStatus({ code, details: status.details, metadata: status.metadata ?? new Metadata() });
        if (body.trace_id !== '') call.fail(new SvcError(body.code, body.message, body.metadata));
      }
      if (span.isRecording()) {
        span.setAttribute(SPAN_ATTRIBUTES.grpcStatusCode, code);
        if (call.failure === undefined && SERVER_FAULTS.has(code)) span.setStatus({ code: SpanStatusCode.ERROR, message: grpcStatusLabel(code) });
      }
      call.end();
      if (metrics !== undefined) {
        if (streaming) {
          if (openStream) metrics.grpcActiveStreams.dec();
          metrics.grpcRequests.inc({ method: grpcMethodLabel(method.path), status: grpcStatusLabel(code) });
        } else {
          metrics.recordGrpcCall(method.path, code, (performance.now() - startedAt) / 1000);
        }
      }
      const ended = call;
      const { failure, traceId } = ended;
      logAccess(log, 'grpc call', () => ({
        rpc: rpc ?? method.path,
        status: grpcStatusLabel(code),
        code: failure?.code,
        duration_ms: elapsedMs(startedAt),
        trace_id: traceId,
        ...clientTraceId(ended),
      }));
    }

    // grpc-js calls its base call's methods on `this`, so an own property here catches the statuses it sends itself.
    // `next` is that base call only for the first interceptor of the server's list (grpc-server.ts keeps this one there).
    const sendStatus = next.sendStatus.bind(next);
    next.sendStatus = (status) => {
      const error = status.metadata?.get(ERROR_TRAILER).length ? undefined : transportError(status, answered);
      const sent = error === undefined ? status : toGrpcStatus(error, call?.answerTraceId ?? newTraceId());
      sendStatus(sent);
      finish({ code: sent.code, details: sent.details ?? '', metadata: sent.metadata ?? new Metadata() });
    };

    return new ServerInterceptingCall(next, {
      start(nextStart) {
        nextStart({
          onReceiveMetadata(metadata, nextMetadata) {
            call = beginCall(tracing, operation, extractGrpcMetadata(metadata), {
              [SPAN_ATTRIBUTES.rpcSystem]: RPC_SYSTEM_GRPC,
              [SPAN_ATTRIBUTES.rpcService]: RPC_SERVICE,
              [SPAN_ATTRIBUTES.rpcMethod]: rpc ?? method.path,
            });
            if (openStream) metrics?.grpcActiveStreams.inc();
            nextMetadata(metadata);
          },
          onReceiveMessage(message, nextMessage) {
            if (call === undefined) return nextMessage(message);
            describeRequest(call.span, operation, message);
            return context.with(call.context, nextMessage, undefined, message);
          },
          onReceiveHalfClose(nextHalfClose) {
            if (call === undefined) return nextHalfClose();
            return context.with(call.context, nextHalfClose);
          },
          onCancel() {
            finish(undefined);
          },
        });
      },
      sendMetadata(metadata, nextMetadata) {
        // Every answer names its trace, as the REST door's X-Trace-Id header does.
        if (call !== undefined) metadata.set(TRACE_ID_HEADER, call.answerTraceId);
        nextMetadata(metadata);
      },
      sendMessage(message, nextMessage) {
        answered = true;
        if (call !== undefined) describeResponse(call.span, operation, message);
        nextMessage(message);
      },
    });
  };
}
