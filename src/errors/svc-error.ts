/**
 * The error model of DESIGN.md section 4: every failure that reaches a client
 * is an `SvcError` with one of these codes. The table below is the only place
 * that maps a code to its HTTP status and gRPC status.
 */
export const ERROR_CODES = [
  'INVALID_ARGUMENT',
  'INVALID_MODULE',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'FAILED_PRECONDITION',
  'ABORTED',
  'PAYLOAD_TOO_LARGE',
  'RESOURCE_EXHAUSTED',
  'RATE_LIMITED',
  'DEADLINE_EXCEEDED',
  'UNAVAILABLE',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** gRPC status numbers (grpc/doc/statuscodes.md); kept here so the table needs no transport import. */
const GRPC = {
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

export const ERROR_TABLE: Readonly<Record<ErrorCode, { http: number; grpc: number }>> = {
  INVALID_ARGUMENT: { http: 400, grpc: GRPC.INVALID_ARGUMENT },
  INVALID_MODULE: { http: 422, grpc: GRPC.INVALID_ARGUMENT },
  UNAUTHENTICATED: { http: 401, grpc: GRPC.UNAUTHENTICATED },
  PERMISSION_DENIED: { http: 403, grpc: GRPC.PERMISSION_DENIED },
  NOT_FOUND: { http: 404, grpc: GRPC.NOT_FOUND },
  ALREADY_EXISTS: { http: 409, grpc: GRPC.ALREADY_EXISTS },
  // As google.api's HTTP mapping (docs/adr/0012-update-error-codes.md): the request is sound, the agent's state refuses it.
  FAILED_PRECONDITION: { http: 400, grpc: GRPC.FAILED_PRECONDITION },
  ABORTED: { http: 409, grpc: GRPC.ABORTED },
  PAYLOAD_TOO_LARGE: { http: 413, grpc: GRPC.RESOURCE_EXHAUSTED },
  RESOURCE_EXHAUSTED: { http: 429, grpc: GRPC.RESOURCE_EXHAUSTED },
  RATE_LIMITED: { http: 429, grpc: GRPC.RESOURCE_EXHAUSTED },
  DEADLINE_EXCEEDED: { http: 504, grpc: GRPC.DEADLINE_EXCEEDED },
  UNAVAILABLE: { http: 503, grpc: GRPC.UNAVAILABLE },
  INTERNAL: { http: 500, grpc: GRPC.INTERNAL },
};

/** String-to-string, as `svc.v1.Error.metadata` is a `map<string, string>`. */
export type ErrorMetadata = Record<string, string>;

export class SvcError extends Error {
  override readonly name = 'SvcError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly metadata: ErrorMetadata = {},
  ) {
    super(message);
  }

  get httpStatus(): number {
    return ERROR_TABLE[this.code].http;
  }

  get grpcStatus(): number {
    return ERROR_TABLE[this.code].grpc;
  }

  /** The `Error` shape of the public contract, minus the trace id the transport adds. */
  toJSON(): { code: ErrorCode; message: string; metadata: ErrorMetadata } {
    return { code: this.code, message: this.message, metadata: { ...this.metadata } };
  }
}

export function isSvcError(value: unknown): value is SvcError {
  return value instanceof SvcError;
}

/** Wraps anything thrown into an `SvcError`; unknown failures become INTERNAL without leaking a stack. */
export function toSvcError(value: unknown): SvcError {
  if (value instanceof SvcError) return value;
  return new SvcError('INTERNAL', 'internal error');
}
