/**
 * Requests Node cannot hand to the gateway: headers that never finish within
 * `request_timeout`, a request line or header Node cannot parse, headers too
 * large, a `CONNECT`, an `Expect` other than `100-continue`. Node answers
 * those with a bare `408`, `400`, `431` or `417`, or cuts the connection;
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
import { httpError, rawHttpError } from './error-body.js';

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

  function refuse(socket: Socket, refusal: SvcError | undefined, reason: string | undefined): void {
    const res = last.get(socket);
    // A pipelined request after one wholly received and still being worked on: the refusal answers the later
    // request, so it waits for the earlier answer to go out; written now, it would read as that answer.
    if (refusal !== undefined && res !== undefined && res.req.complete && !res.writableFinished) {
      res.once('close', () => (res.writableFinished ? refuse(socket, refusal, reason) : socket.destroy()));
      return;
    }
    // A last request wholly received and answered leaves the socket free for this answer. Otherwise bytes
    // written now would land in the middle of its answer, or after one given before its body had all arrived.
    const busy = res !== undefined && res.headersSent && !(res.writableFinished && res.req.complete);
    if (refusal === undefined || busy || !socket.writable) {
      socket.destroy();
      return;
    }
    // A refusal of the last request (its body had not all arrived) names its call's trace, which the gateway's
    // telemetry middleware set on the response before any work; a refusal of a later request has a trace of its own.
    const named = res !== undefined && !res.req.complete ? res.getHeader('x-trace-id') : undefined;
    const traceId = typeof named === 'string' ? named : newTraceId();
    log?.debug({ code: refusal.code, reason, trace_id: traceId }, 'http request refused before routing');
    socket.end(rawHttpError(refusal, traceId), () => socket.destroy());
  }

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => refuse(socket, refusalOf(err), err.code));
  // Without a listener Node cuts a CONNECT's connection without a word; no route tunnels.
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    // Node has handed the socket over without its error listener; a client gone mid-answer must not be uncaught.
    socket.on('error', () => socket.destroy());
    const target = req.url ?? '';
    refuse(socket, new SvcError('NOT_FOUND', `no route for CONNECT ${target}`, { method: 'CONNECT', path: target }), 'connect');
  });
  // Node's default is a bare 417; the body has not been read, so the connection closes after the answer.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const refusal = new SvcError('INVALID_ARGUMENT', 'only the expectation 100-continue is supported', { field: 'Expect', reason: 'unsupported_expectation' });
    const traceId = newTraceId();
    const { status, body, headers } = httpError(refusal, traceId);
    const json = JSON.stringify(body);
    log?.debug({ code: refusal.code, reason: 'expectation', trace_id: traceId }, 'http request refused before routing');
    res
      .writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(json), 'X-Trace-Id': traceId, Connection: 'close' })
      .end(json);
  });
}
