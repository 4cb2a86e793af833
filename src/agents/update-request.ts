/**
 * Validation of `UpdateAgentRequest` before anything is admitted or changed,
 * as deploy-request.ts does for deploys: INVALID_ARGUMENT with `field` and
 * `reason`. Empty fields keep what the agent has; a request that changes
 * nothing is refused.
 */
import { parseRollbackWindow, type RollbackWindow } from '../config/rollback-window.js';
import { SvcError } from '../errors/svc-error.js';
import { capabilities, field, invalid, isRecord, resourcesOf } from './deploy-request.js';

export interface ValidUpdate {
  agentId: string;
  module: Uint8Array | undefined;
  capabilities: string[] | undefined;
  /** Only the limits the request changes (0 keeps a limit). */
  memoryLimitBytes: number | undefined;
  cpuShares: number | undefined;
  keepState: boolean;
  /** Undefined: the server's `runtime.update_rollback_window`. */
  rollbackWindow: RollbackWindow | undefined;
}

function agentId(input: Record<string, unknown>): string {
  const [value, name] = field(input, 'agent_id', 'agentId');
  if (typeof value !== 'string' || value === '') throw new SvcError('INVALID_ARGUMENT', `${name} is required`, { field: name, reason: 'required' });
  return value;
}

function module(input: Record<string, unknown>): Uint8Array | undefined {
  const [value, name] = field(input, 'wasm_module', 'wasmModule');
  if (value === undefined || value === null) return undefined;
  if (!(value instanceof Uint8Array)) throw invalid(name, `${name} must be the module's bytes`, 'wrong_type');
  return value.length === 0 ? undefined : value;
}

function rollbackWindow(input: Record<string, unknown>): RollbackWindow | undefined {
  const [value, name] = field(input, 'rollback_window', 'rollbackWindow');
  if (value === undefined || value === null || value === '') return undefined;
  const window = parseRollbackWindow(value);
  if (window === undefined) throw invalid(name, `${name} must be a whole number of messages or a duration with its unit (30s, 5m); 0 turns rollback off`, 'invalid_window');
  return window;
}

export function validateUpdateRequest(input: unknown, limits: { maxMemoryBytes: number }): ValidUpdate {
  if (!isRecord(input)) throw invalid('request', 'the request must be an object', 'wrong_type', { expected: 'object' });
  const id = agentId(input);
  const bytes = module(input);
  const caps = capabilities('capabilities', input['capabilities']);
  const { memoryLimit, cpuShares } = resourcesOf(input, limits.maxMemoryBytes);
  const [keep, keepField] = field(input, 'keep_state', 'keepState');
  if (keep !== undefined && keep !== null && typeof keep !== 'boolean') throw invalid(keepField, `${keepField} must be true or false`, 'wrong_type', { expected: 'boolean' });
  const keepState = keep === true;
  if (keepState && bytes === undefined) throw invalid(keepField, `${keepField} needs wasm_module: only a new module takes the state along`, 'needs_module');
  const window = rollbackWindow(input);
  if (bytes === undefined && caps.length === 0 && memoryLimit === 0 && cpuShares === 0) {
    throw invalid('wasm_module', 'nothing to update: give wasm_module, capabilities or resources', 'required');
  }
  return {
    agentId: id,
    module: bytes,
    capabilities: caps.length === 0 ? undefined : caps,
    memoryLimitBytes: memoryLimit === 0 ? undefined : memoryLimit,
    cpuShares: cpuShares === 0 ? undefined : cpuShares,
    keepState,
    rollbackWindow: window,
  };
}
