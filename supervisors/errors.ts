/**
 * Errors of the supervisor API are data: a code the server maps in one place
 * (not_found → NOT_FOUND, already_exists → ALREADY_EXISTS, not_running →
 * UNAVAILABLE, ...), the child concerned and the cause. Misuse that can only
 * be a programming error (a malformed spec or option) throws a TypeError or
 * RangeError instead.
 */
export type SupervisorErrorCode =
  /** No child with that id. */
  | 'not_found'
  /** A child with that id exists already. */
  | 'already_exists'
  /** The child is alive; the operation needs it stopped or failed. */
  | 'running'
  /** The supervisor is not running (not started yet, stopping or stopped). */
  | 'not_running'
  /** The child's start threw, rejected or timed out. */
  | 'start_failed'
  /** More restarts within the period than the intensity allows. */
  | 'reached_max_restart_intensity';

export class SupervisorError extends Error {
  override readonly name = 'SupervisorError';
  readonly code: SupervisorErrorCode;
  readonly supervisor: string;
  readonly childId: string | undefined;

  constructor(code: SupervisorErrorCode, message: string, details: { supervisor: string; childId?: string; cause?: unknown }) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.supervisor = details.supervisor;
    this.childId = details.childId;
  }
}
