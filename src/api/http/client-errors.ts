/**
 * Requests Node cannot hand to the gateway: headers that never finish within
 * `request_timeout`, a request line or header Node cannot parse, headers too
 * large. Node answers those with a bare `408`, `400` or `431` and no body;
 * here they get the `Error` shape and a status of the error table, like every
 * other failure of the REST door. When Node's request timeout fires while
 * the gateway still works on the request, this answer (504, with the call's
 * trace id) comes first and the gateway's is dropped with the connection; a
 * request whose answer has begun gets nothing more.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { SvcError } from '../../errors/svc-error.js';
import type { Logger } from '../../telemetry/logger.js';
import { newTraceId } from '../../telemetry/trace-ids.js';
import { rawHttpError } from './error-body.js';

/** Node's error codes for what a client did wrong, mapped to the error table. */
function refusalOf(err: NodeJS.ErrnoException): SvcError | undefined {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new SvcError('DEADLINE_EXCEEDED', 'the request was not received within request_timeout', { reason: 'request_timeout' });
    case 'HPE_HEADER_OVERFLOW':
      return new SvcError('PAYLOAD_TOO_LARGE', 'the request headers are too large', { reason: 'header_overflow' });
    case 'ECONNRESET':
    case 'EPIPE':
      // The client is gone; there is no one to answer.
      return undefined;
    default:
      return new SvcError('INVALID_ARGUMENT', 'malformed HTTP request', { reason: err.code ?? 'parse_error' });
  }
}

export function answerClientErrors(server: Server, log?: Logger): void {
  /** The last request each socket carried (one map write a request: no listener on the hot path). */
  const last = new WeakMap<Socket, ServerResponse>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => void last.set(req.socket, res));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const refusal = refusalOf(err);
    const res = last.get(socket);
    // A last request wholly received and answered leaves the socket free for this answer. Otherwise bytes
    // written now would land in the middle of its answer, or after one given before its body had all arrived.
    const busy = res !== undefined && res.headersSent && !(res.writableFinished && res.req.complete);
    if (refusal === undefined || busy || !socket.writable) {
      socket.destroy();
      return;
    }
    // The gateway's telemetry middleware names the call's trace on the response before any work.
    const named = res?.getHeader('x-trace-id');
    const traceId = typeof named === 'string' ? named : newTraceId();
    log?.debug({ code: refusal.code, reason: err.code, trace_id: traceId }, 'http request refused before routing');
    socket.end(rawHttpError(refusal, traceId), () => socket.destroy());
  });
}
