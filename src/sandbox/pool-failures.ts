/** How the executor pool's failures reach its callers: error codes, the messages of a lost call, and a result that ran nothing. */
import type { ErrorCode } from '../errors/svc-error.js';
import type { ExecutionFailure, ExecutionResult } from './types.js';

/** How a failed instantiation reaches callers; `metadata.reason` keeps the precise failure. */
export const INSTANTIATE_ERRORS: Readonly<Record<ExecutionFailure, ErrorCode>> = {
  trap: 'INVALID_MODULE',
  fuel_exhausted: 'INVALID_MODULE',
  output_limit: 'INVALID_MODULE',
  memory_limit: 'RESOURCE_EXHAUSTED',
  timeout: 'DEADLINE_EXCEEDED',
  worker_lost: 'UNAVAILABLE',
  not_instantiated: 'INTERNAL',
  overloaded: 'RESOURCE_EXHAUSTED',
  closed: 'UNAVAILABLE',
};

export type Loss = 'timeout' | 'worker_lost';

export const LOSS_MESSAGES: Readonly<Record<Loss, string>> = {
  timeout: 'the run overstayed its timeout; its worker was terminated',
  worker_lost: 'the worker was terminated while the call was pending',
};

export function emptyResult(failure: ExecutionFailure, message: string): ExecutionResult {
  return { ok: false, failure, message, stdout: [], stderr: [], fuelUsed: 0n, durationNs: 0, memoryBytes: 0 };
}
