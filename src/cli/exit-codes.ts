/**
 * Exit codes scripts can rely on (docs/api.md lists them). A server error
 * maps through its `svc.v1.Error` code, so the same failure exits the same
 * way whichever command hit it.
 */
import type { ErrorCode } from '../errors/svc-error.js';

export const EXIT = {
  ok: 0,
  /** Anything unexpected, including the server's INTERNAL. */
  failure: 1,
  /** Bad command line. */
  usage: 2,
  /** Invalid configuration. */
  config: 3,
  /** The request was refused as it stands: invalid argument or module, too large, already exists, a failed precondition. */
  rejected: 4,
  /** The agent (or other resource) does not exist. */
  not_found: 5,
  /** The server cannot be reached, is not ready or draining, did not answer in time, or another change won (ABORTED): retrying may help. */
  unavailable: 6,
  /** Authentication or permission refused. */
  denied: 7,
  /** A limit or rate limit was hit: retry later. */
  limited: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

const BY_ERROR_CODE: Readonly<Record<ErrorCode, ExitCode>> = {
  INVALID_ARGUMENT: EXIT.rejected,
  INVALID_MODULE: EXIT.rejected,
  PAYLOAD_TOO_LARGE: EXIT.rejected,
  ALREADY_EXISTS: EXIT.rejected,
  FAILED_PRECONDITION: EXIT.rejected,
  NOT_FOUND: EXIT.not_found,
  UNAVAILABLE: EXIT.unavailable,
  DEADLINE_EXCEEDED: EXIT.unavailable,
  ABORTED: EXIT.unavailable,
  UNAUTHENTICATED: EXIT.denied,
  PERMISSION_DENIED: EXIT.denied,
  RESOURCE_EXHAUSTED: EXIT.limited,
  RATE_LIMITED: EXIT.limited,
  INTERNAL: EXIT.failure,
};

export function exitCodeFor(code: ErrorCode): ExitCode {
  return BY_ERROR_CODE[code];
}
