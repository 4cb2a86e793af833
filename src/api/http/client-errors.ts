/**
 * Requests Node cannot hand to the gateway: headers that never finish within
 * `request_timeout`, a request line or header Node cannot parse, headers too
 * large. Node answers those with a bare `408`, `400` or `431` and no body;
 * here they get the `Error` shape and a status of the error table, like every
 * other failure of the REST door. A request already answered (a body that
 * stalled past the deadline middleware's 504) gets nothing more: Node's own
 * handler would write a second, unsolicited `408` on that connection.
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
  /** Sockets with an answer being written, or whose last request was answered before its body had all arrived. */
  const unsafe = new WeakSet<Socket>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    unsafe.add(req.socket);
    res.once('finish', () => {
      if (req.complete) unsafe.delete(req.socket);
    });
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const refusal = refusalOf(err);
    // Bytes written now would land in the middle of another answer, or after one the client already has.
    if (refusal === undefined || unsafe.has(socket) || !socket.writable) {
      socket.destroy();
      return;
    }
    const traceId = newTraceId();
    log?.debug({ code: refusal.code, reason: err.code, trace_id: traceId }, 'http request refused before routing');
    socket.end(rawHttpError(refusal, traceId), () => socket.destroy());
  });
}
