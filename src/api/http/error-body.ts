/**
 * One failure as the REST door answers it: the HTTP status of the error table
 * (DESIGN.md section 4) and the `svc.v1.Error` body. Anything that is not an
 * `SvcError` is mapped here too, so no path can answer with a bare 500 or a
 * stack trace.
 */
import { STATUS_CODES } from 'node:http';
import { SvcError, toSvcError, type ErrorCode } from '../../errors/svc-error.js';
import type { ErrorBody } from '../proto.js';

export interface HttpError {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

/** http-errors style failures (Koa, body parsing) carry a 4xx `status`; their text is safe to show when `expose` says so. */
function fromHttpStatus(err: unknown): SvcError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { status, expose, message } = err as { status?: unknown; expose?: unknown; message?: unknown };
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  const code: ErrorCode = status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 404 ? 'NOT_FOUND' : status === 408 ? 'DEADLINE_EXCEEDED' : 'INVALID_ARGUMENT';
  return new SvcError(code, expose === true && typeof message === 'string' ? message : 'bad request', { http_status: String(status) });
}

export function asSvcError(err: unknown): SvcError {
  if (err instanceof SvcError) return err;
  return fromHttpStatus(err) ?? toSvcError(err);
}

export function httpError(err: unknown, traceId: string): HttpError {
  const error = asSvcError(err);
  const headers: Record<string, string> = {};
  // RATE_LIMITED tells the client when to come back (src/security/retry-after.ts sets it).
  const retryAfter = error.metadata.retry_after_seconds;
  if (error.code === 'RATE_LIMITED' && retryAfter !== undefined) headers['Retry-After'] = retryAfter;
  // RFC 6750: a 401 names the scheme that would be accepted.
  if (error.code === 'UNAUTHENTICATED') headers['WWW-Authenticate'] = 'Bearer';
  return {
    status: error.httpStatus,
    body: { code: error.code, message: error.message, trace_id: traceId, metadata: { ...error.metadata } },
    headers,
  };
}

/**
 * `error` as a whole HTTP/1.1 answer to write on a bare socket (one no
 * `ServerResponse` owns: a refused upgrade, a request Node could not read),
 * closing the connection. `traceId` goes into a header, so it must be
 * visible ASCII (trace-context.ts makes sure of it).
 */
export function rawHttpError(err: unknown, traceId: string, extraHeaders: Readonly<Record<string, string>> = {}): string {
  const { status, body, headers: errorHeaders } = httpError(err, traceId);
  const headers = { ...errorHeaders, ...extraHeaders };
  const json = JSON.stringify(body);
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'Connection: close',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(json)}`,
    `X-Trace-Id: ${traceId}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n${json}`;
}
