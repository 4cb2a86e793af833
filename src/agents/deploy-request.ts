/**
 * Validation of `DeployAgentRequest` before anything is admitted or stored:
 * every refusal is INVALID_ARGUMENT with metadata `field` naming the field as
 * the client spelled it (snake_case, or the lowerCamelCase of the proto3
 * JSON mapping) and a `reason`. The module's own checks are admission's.
 */
import { SvcError } from '../errors/svc-error.js';
import { illFormed, isWellFormed } from '../text/well-formed.js';

/** Capabilities an agent may declare; they are labels, not grants, so a small bound is plenty. */
export const MAX_CAPABILITIES = 64;
/** Characters of a name or a capability. */
export const MAX_LABEL_LENGTH = 256;
/** cgroup v1's default `cpu.shares`: the weight of an agent that asks for none. */
export const DEFAULT_CPU_SHARES = 1024;
/** cgroup v1's largest `cpu.shares`. */
export const MAX_CPU_SHARES = 262_144;
/**
 * What an agent id looks like (a ULID): a name may not, so that wherever an
 * id is accepted a name can stand for it (agent-service.ts) without doubt.
 */
export const AGENT_ID_SHAPE = /^[0-9A-HJKMNP-TV-Z]{26}$/i;
/** Receivers with this prefix are clients: a name may not start with it either. */
const CLIENT_PREFIX = 'client:';

export interface DeployLimits {
  /** The per-agent maximum of linear memory (`max_memory_pages` × 64 KiB); also what 0 means. */
  maxMemoryBytes: number;
}

/** A request that passed validation, with `memory_limit` 0 and `cpu_shares` 0 resolved to their defaults. */
export interface ValidDeploy {
  name: string;
  module: Uint8Array;
  capabilities: string[];
  memoryLimitBytes: number;
  cpuShares: number;
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

export function invalid(field: string, message: string, reason: string, extra: Record<string, string> = {}): SvcError {
  return new SvcError('INVALID_ARGUMENT', message, { field, reason, ...extra });
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value of `snake` or its camelCase spelling, with the spelling used (for error messages). */
export function field(input: Record<string, unknown>, snake: string, camel: string, prefix = ''): [unknown, string] {
  if (input[snake] !== undefined) return [input[snake], prefix + snake];
  return [input[camel], prefix + (input[camel] === undefined ? snake : camel)];
}

function label(name: string, value: unknown): string {
  if (typeof value !== 'string') throw invalid(name, `${name} must be a string`, 'wrong_type', { expected: 'string' });
  if (value.trim() === '') throw invalid(name, `${name} must not be empty`, 'required');
  if (value.length > MAX_LABEL_LENGTH) throw invalid(name, `${name} exceeds ${MAX_LABEL_LENGTH} characters`, 'too_long', { limit: String(MAX_LABEL_LENGTH) });
  if (CONTROL_CHARS.test(value)) throw invalid(name, `${name} contains control characters`, 'control_characters');
  if (!isWellFormed(value)) throw illFormed(name);
  return value;
}

export function wholeNumber(name: string, value: unknown, max: number): number {
  if (value === undefined || value === null || value === '') return 0;
  // proto3 JSON carries 64-bit integers as strings.
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 0) {
    throw invalid(name, `${name} must be a whole number >= 0`, 'wrong_type', { expected: 'integer' });
  }
  if (number > max) throw invalid(name, `${name} ${number} exceeds the limit of ${max}`, 'out_of_range', { limit: String(max) });
  return number;
}

export function capabilities(name: string, value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid(name, `${name} must be a list of strings`, 'wrong_type', { expected: 'array' });
  if (value.length > MAX_CAPABILITIES) throw invalid(name, `${name} has more than ${MAX_CAPABILITIES} entries`, 'too_many_entries', { limit: String(MAX_CAPABILITIES) });
  return [...new Set(value.map((entry, i) => label(`${name}[${i}]`, entry)))];
}

/** The request's `resources`: each a whole number, 0 when absent. */
export function resourcesOf(input: Record<string, unknown>, maxMemoryBytes: number): { memoryLimit: number; cpuShares: number } {
  const resources = input['resources'] ?? {};
  if (!isRecord(resources)) throw invalid('resources', 'resources must be an object', 'wrong_type', { expected: 'object' });
  const [memory, memoryField] = field(resources, 'memory_limit', 'memoryLimit', 'resources.');
  const [shares, sharesField] = field(resources, 'cpu_shares', 'cpuShares', 'resources.');
  return { memoryLimit: wholeNumber(memoryField, memory, maxMemoryBytes), cpuShares: wholeNumber(sharesField, shares, MAX_CPU_SHARES) };
}

export function validateDeployRequest(input: unknown, limits: DeployLimits): ValidDeploy {
  if (!isRecord(input)) throw invalid('request', 'the request must be an object', 'wrong_type', { expected: 'object' });
  const name = label('name', input['name']);
  if (AGENT_ID_SHAPE.test(name) || name.startsWith(CLIENT_PREFIX) || name === 'platform') {
    throw invalid('name', 'name must not look like an agent id (26 base32 characters), a client (client:...) or the platform', 'reserved');
  }
  const [module, moduleField] = field(input, 'wasm_module', 'wasmModule');
  if (!(module instanceof Uint8Array)) throw invalid(moduleField, `${moduleField} must be the module's bytes`, module === undefined ? 'required' : 'wrong_type');
  if (module.length === 0) throw invalid(moduleField, `${moduleField} is empty`, 'required');
  const caps = capabilities('capabilities', input['capabilities']);
  const { memoryLimit, cpuShares } = resourcesOf(input, limits.maxMemoryBytes);
  return {
    name,
    module,
    capabilities: caps,
    memoryLimitBytes: memoryLimit === 0 ? limits.maxMemoryBytes : memoryLimit,
    cpuShares: cpuShares === 0 ? DEFAULT_CPU_SHARES : cpuShares,
  };
}
