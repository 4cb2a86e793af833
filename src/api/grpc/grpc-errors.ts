/**
 * Errors across the gRPC door, both ways: an `SvcError` (or anything thrown)
 * becomes the status of DESIGN.md section 4 plus the serialized
 * `svc.v1.Error` in the trailer `svc-error-bin`; a client reads it back.
 */
import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { ERROR_CODES, SvcError, toSvcError, type ErrorCode } from '../../errors/svc-error.js';
import { truncate } from '../../text/well-formed.js';
import { loadManagementProto, type ErrorBody } from '../proto.js';

/** Binary metadata: the `-bin` suffix makes grpc-js carry the value as bytes (base64 on the wire). */
export const ERROR_TRAILER = 'svc-error-bin';

export type GrpcErrorStatus = Pick<StatusObject, 'code' | 'details' | 'metadata'>;

/**
 * Longest message or metadata value the status carries, in characters. Errors
 * echo what the client sent (an agent id, a performative); echoed whole, a
 * 40 KB id made trailers past the client's header list limit (64 KiB in
 * Node, 8 KiB soft in gRPC C-core), and the call hung instead of failing.
 * 512 keeps a worst-case trailer (message plus a few values, all 3-byte
 * UTF-8, percent-encoded and base64) under 16 KiB.
 */
export const MAX_ERROR_TEXT = 512;

/** `text` cut to `MAX_ERROR_TEXT` characters, marked with an ellipsis; never splits a surrogate pair. */
function bounded(text: string): string {
  return text.length <= MAX_ERROR_TEXT ? text : `${truncate(text, MAX_ERROR_TEXT - 1)}…`;
}

/** The status and trailer a failed call ends with. Unknown failures become INTERNAL without their message or stack. */
export function toGrpcStatus(error: unknown, traceId: string): GrpcErrorStatus {
  const svc = toSvcError(error);
  const message = bounded(svc.message);
  const body: ErrorBody = {
    code: svc.code,
    message,
    trace_id: traceId,
    metadata: Object.fromEntries(Object.entries(svc.metadata).map(([key, value]) => [key, bounded(value)])),
  };
  const metadata = new Metadata();
  metadata.set(ERROR_TRAILER, Buffer.from(loadManagementProto().encodeError(body)));
  return { code: svc.grpcStatus, details: `${svc.code}: ${message}`, metadata };
}

/**
 * What a status grpc-js sent on its own, without our trailer, becomes, so
 * that every failed call carries `svc-error-bin` (DESIGN.md section 4):
 * - before the service answered, INTERNAL or UNIMPLEMENTED is grpc-js
 *   refusing the request: bytes that are no protobuf, a compressed message
 *   that does not inflate or names an unknown encoding, a malformed
 *   `grpc-timeout`, no request message or a second one. That is the
 *   client's error; after the service answered, it is a response grpc-js
 *   could not send: ours;
 * - RESOURCE_EXHAUSTED before the service answered is a request past the
 *   receive limit (or one that inflates past it): PAYLOAD_TOO_LARGE, as the
 *   REST door's body limit;
 * - DEADLINE_EXCEEDED is the client's deadline passing (grpc-js's timer).
 * Undefined means "send the status as it is" (success).
 */
export function transportError(status: Pick<StatusObject, 'code' | 'details'>, answered: boolean): SvcError | undefined {
  switch (status.code) {
    case GrpcStatus.OK:
      return undefined;
    case GrpcStatus.DEADLINE_EXCEEDED:
      return new SvcError('DEADLINE_EXCEEDED', "the call's deadline passed", { reason: 'deadline' });
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return answered ? new SvcError('INTERNAL', 'internal error') : tooLarge(status.details);
    case GrpcStatus.INTERNAL:
    case GrpcStatus.UNIMPLEMENTED:
      if (!answered) return new SvcError('INVALID_ARGUMENT', `the request could not be read: ${status.details}`, { reason: 'malformed_request' });
      return new SvcError('INTERNAL', 'internal error');
    default:
      return new SvcError('INTERNAL', 'internal error');
  }
}

/**
 * grpc-js's refusal of a request past its receive limit, as PAYLOAD_TOO_LARGE
 * with the figures it gives: "Received message larger than max (SIZE vs
 * LIMIT)", or for a compressed message "… decompresses to a size larger
 * than LIMIT".
 */
function tooLarge(details: string): SvcError {
  const sized = /\((\d+) vs (\d+)\)/.exec(details);
  const limit = sized?.[2] ?? /larger than (\d+)/.exec(details)?.[1];
  const metadata: Record<string, string> = { reason: 'too_large' };
  if (limit !== undefined) metadata.limit = limit;
  if (sized?.[1] !== undefined) metadata.size = sized[1];
  const text = limit === undefined ? 'the request message exceeds the receive limit' : `the request message exceeds the receive limit of ${limit} bytes`;
  return new SvcError('PAYLOAD_TOO_LARGE', text, metadata);
}

/** What a gRPC status means when the server sent no `svc-error-bin` (a transport failure, a proxy, a client-side deadline). */
const FALLBACK_CODES: Partial<Record<number, ErrorCode>> = {
  [GrpcStatus.INVALID_ARGUMENT]: 'INVALID_ARGUMENT',
  [GrpcStatus.DEADLINE_EXCEEDED]: 'DEADLINE_EXCEEDED',
  [GrpcStatus.NOT_FOUND]: 'NOT_FOUND',
  [GrpcStatus.ALREADY_EXISTS]: 'ALREADY_EXISTS',
  [GrpcStatus.FAILED_PRECONDITION]: 'FAILED_PRECONDITION',
  [GrpcStatus.ABORTED]: 'ABORTED',
  [GrpcStatus.PERMISSION_DENIED]: 'PERMISSION_DENIED',
  [GrpcStatus.RESOURCE_EXHAUSTED]: 'RESOURCE_EXHAUSTED',
  [GrpcStatus.UNAVAILABLE]: 'UNAVAILABLE',
  [GrpcStatus.UNAUTHENTICATED]: 'UNAUTHENTICATED',
};

function isErrorCode(value: string): value is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(value);
}

/**
 * The `svc.v1.Error` a failed call carries: decoded from the trailer when the
 * server sent one, otherwise made up from the gRPC status alone.
 */
export function errorFromStatus(error: Pick<ServiceError, 'code' | 'details' | 'metadata'>): ErrorBody & { code: ErrorCode } {
  const [bytes] = error.metadata?.get(ERROR_TRAILER) ?? [];
  if (bytes instanceof Uint8Array) {
    try {
      const body = loadManagementProto().decodeError(bytes);
      if (isErrorCode(body.code)) return { ...body, code: body.code };
    } catch {
      // A trailer that does not decode is treated as absent: the status still says what happened.
    }
  }
  return { code: FALLBACK_CODES[error.code] ?? 'INTERNAL', message: error.details || GrpcStatus[error.code] || 'unknown error', trace_id: '', metadata: {} };
}
