/**
 * Errors across the gRPC door, both ways: an `SvcError` (or anything thrown)
 * becomes the status of DESIGN.md section 4 plus the serialized
 * `svc.v1.Error` in the trailer `svc-error-bin`; a client reads it back.
 */
import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { ERROR_CODES, toSvcError, type ErrorCode } from '../../errors/svc-error.js';
import { loadManagementProto, type ErrorBody } from '../proto.js';

/** Binary metadata: the `-bin` suffix makes grpc-js carry the value as bytes (base64 on the wire). */
export const ERROR_TRAILER = 'svc-error-bin';

export type GrpcErrorStatus = Pick<StatusObject, 'code' | 'details' | 'metadata'>;

/** The status and trailer a failed call ends with. Unknown failures become INTERNAL without their message or stack. */
export function toGrpcStatus(error: unknown, traceId: string): GrpcErrorStatus {
  const svc = toSvcError(error);
  const body: ErrorBody = { code: svc.code, message: svc.message, trace_id: traceId, metadata: { ...svc.metadata } };
  const metadata = new Metadata();
  metadata.set(ERROR_TRAILER, Buffer.from(loadManagementProto().encodeError(body)));
  return { code: svc.grpcStatus, details: `${svc.code}: ${svc.message}`, metadata };
}

/** What a gRPC status means when the server sent no `svc-error-bin` (a transport failure, a proxy, a client-side deadline). */
const FALLBACK_CODES: Partial<Record<number, ErrorCode>> = {
  [GrpcStatus.INVALID_ARGUMENT]: 'INVALID_ARGUMENT',
  [GrpcStatus.DEADLINE_EXCEEDED]: 'DEADLINE_EXCEEDED',
  [GrpcStatus.NOT_FOUND]: 'NOT_FOUND',
  [GrpcStatus.ALREADY_EXISTS]: 'ALREADY_EXISTS',
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
