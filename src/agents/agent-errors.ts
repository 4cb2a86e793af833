/**
 * The one place where failures of the layers below AgentService become the
 * public error codes (DESIGN.md section 4): store errors, supervisor errors
 * from a first start, and the router's refusals of a client's message.
 */
import { SupervisorError } from '../../supervisors/index.js';
import type { FailureReason } from '../bus/message.js';
import { SvcError, isSvcError, type ErrorCode } from '../errors/svc-error.js';
import { isStorageFault, isStoreError } from '../store/store-error.js';

const STORE_CODES: Readonly<Record<string, ErrorCode>> = {
  conflict: 'ALREADY_EXISTS',
  not_found: 'NOT_FOUND',
  invalid_page_token: 'INVALID_ARGUMENT',
};

/**
 * A storage fault (a full disk, a read-only or damaged store, an I/O error)
 * is the server's trouble, not the request's: UNAVAILABLE with reason
 * `storage_<kind>`, so clients retry and load balancers see /ready say the
 * same. The store logged the cause (guarded-store.ts); the message says only
 * what kind of fault it is.
 */
export function fromStoreError(error: unknown): SvcError {
  if (isSvcError(error)) return error;
  if (isStorageFault(error)) return new SvcError('UNAVAILABLE', error.message, { reason: `storage_${error.kind}` });
  if (isStoreError(error)) {
    const code = STORE_CODES[error.kind];
    if (code !== undefined) return new SvcError(code, error.message, { ...error.metadata, reason: error.kind });
  }
  return new SvcError('INTERNAL', 'internal error');
}

/**
 * Why a deploy's first start failed. The pool's own errors pass through
 * (INVALID_MODULE for a trap or fuel exhaustion in `_initialize`,
 * DEADLINE_EXCEEDED for its watchdog, RESOURCE_EXHAUSTED for memory); the
 * startup timeout on the supervisor's clock is DEADLINE_EXCEEDED too.
 */
export function fromStartFailure(error: unknown, agentId: string): SvcError {
  if (isSvcError(error)) return error;
  if (error instanceof SupervisorError) {
    if (isSvcError(error.cause)) return error.cause;
    if (error.code === 'start_failed' && error.message.endsWith('start_timeout')) {
      return new SvcError('DEADLINE_EXCEEDED', 'the agent did not start within agent_startup_timeout', { agent_id: agentId, reason: 'start_timeout' });
    }
    if (error.code === 'not_running') return new SvcError('UNAVAILABLE', 'the server is shutting down', { agent_id: agentId, reason: 'draining' });
  }
  return new SvcError('INTERNAL', 'internal error', { agent_id: agentId });
}

/**
 * A client's message the router refused: unknown receiver NOT_FOUND, a full
 * mailbox or a server short of memory RESOURCE_EXHAUSTED (retry later), a failed agent UNAVAILABLE (it
 * will not take messages until it is redeployed or restarted).
 */
export function fromRefusal(reason: FailureReason, receiver: string): SvcError {
  switch (reason) {
    case 'unknown_receiver':
      return new SvcError('NOT_FOUND', `agent ${receiver} not found`, { agent_id: receiver, reason });
    case 'mailbox_full':
      return new SvcError('RESOURCE_EXHAUSTED', `the mailbox of agent ${receiver} is full`, { agent_id: receiver, reason });
    case 'memory_pressure':
      return new SvcError('RESOURCE_EXHAUSTED', 'the server is short of memory and takes no new work now; retry later', { agent_id: receiver, reason });
    case 'agent_failed':
      return new SvcError('UNAVAILABLE', `agent ${receiver} has failed and takes no messages`, { agent_id: receiver, reason });
    case 'execution_crashed':
      return new SvcError('INTERNAL', 'internal error', { agent_id: receiver, reason });
    case 'permission_denied':
      return new SvcError('PERMISSION_DENIED', `agent ${receiver} does not take messages (it lacks message:receive)`, { agent_id: receiver, reason, permission: 'message:receive' });
  }
}

/** The host's refusals of new work: shutting down, short of memory, a name taken on this node. */
export const draining = (): SvcError => new SvcError('UNAVAILABLE', 'the server is shutting down', { reason: 'draining' });
export const memoryPressure = (): SvcError =>
  new SvcError('RESOURCE_EXHAUSTED', 'the server is short of memory and deploys no agent now; retry later', { reason: 'memory_pressure' });
/** The store's own refusal of a taken name (fromStoreError), for the same name found taken before the start. */
export const nameTaken = (name: string): SvcError => new SvcError('ALREADY_EXISTS', `an agent named "${name}" already exists`, { field: 'name', name, reason: 'conflict' });
