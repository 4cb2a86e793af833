/**
 * One failure as the REST door answers it: the HTTP status of the error table
 * (DESIGN.md section 4) and the `svc.v1.Error` body. Anything that is not an
 * `SvcError` is mapped here too, so no path can answer with a bare 500 or a
 * stack trace.
 */
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
  // RATE_LIMITED tells the client when to come back (the rate limiter of a later issue sets it).
  const retryAfter = error.metadata.retry_after_seconds;
  if (error.code === 'RATE_LIMITED' && retryAfter !== undefined) headers['Retry-After'] = retryAfter;
  return {
    status: error.httpStatus,
    body: { code: error.code, message: error.message, trace_id: traceId, metadata: { ...error.metadata } },
    headers,
  };
}
