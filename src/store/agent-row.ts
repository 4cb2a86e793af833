/**
 * Conversion between `AgentRecord` and a row of `agents` (joined with the
 * module's size). Rows are checked on the way out: a value no version of this
 * code writes means the file was damaged or edited, reported as `corrupt`
 * naming the agent rather than as a TypeError somewhere later.
 */
import { StoreError } from './store-error.js';
import type { AgentRecord, AgentResources, DesiredState, NewAgent } from './types.js';

export interface AgentRow {
  agent_id: string;
  name: string;
  capabilities: string;
  resources: string;
  module_sha256: string;
  module_size: number;
  module_version: number;
  previous_module_sha256: string | null;
  previous_module_version: number | null;
  previous_module_size: number | null;
  desired_state: string;
  restart_count: number;
  node_id: string;
  created_at: number;
  updated_at: number;
}

/** Columns of a joined read, in one place for every SELECT (`FROM_AGENTS` names the tables). */
export const AGENT_COLUMNS = `a.agent_id, a.name, a.capabilities, a.resources, a.module_sha256, m.size AS module_size,
  a.module_version, a.previous_module_sha256, a.previous_module_version, p.size AS previous_module_size,
  a.desired_state, a.restart_count, a.node_id, a.created_at, a.updated_at`;

/** The agents with their module, and their previous module when they have one. */
export const FROM_AGENTS = 'agents a JOIN modules m ON m.sha256 = a.module_sha256 LEFT JOIN modules p ON p.sha256 = a.previous_module_sha256';

/** Named parameters of the agent INSERT. */
export function toInsertParams(agent: NewAgent, moduleSha256: string): Record<string, string | number> {
  return {
    agent_id: agent.agentId,
    name: agent.name,
    capabilities: JSON.stringify(agent.capabilities),
    resources: JSON.stringify({ memory_limit: agent.resources.memoryLimit, cpu_shares: agent.resources.cpuShares }),
    module_sha256: moduleSha256,
    desired_state: agent.desiredState,
    node_id: agent.nodeId,
    created_at: agent.createdAt,
  };
}

export function fromRow(row: AgentRow): AgentRecord {
  return {
    agentId: row.agent_id,
    name: row.name,
    capabilities: parseCapabilities(row),
    resources: parseResources(row),
    desiredState: parseDesiredState(row),
    nodeId: row.node_id,
    createdAt: row.created_at,
    moduleSha256: row.module_sha256,
    moduleSize: row.module_size,
    moduleVersion: row.module_version,
    previousModule: parsePrevious(row),
    restartCount: row.restart_count,
    updatedAt: row.updated_at,
  };
}

function parsePrevious(row: AgentRow): AgentRecord['previousModule'] {
  const { previous_module_sha256: sha256, previous_module_version: version, previous_module_size: size } = row;
  if (sha256 === null) return null;
  if (version === null || size === null) throw corrupt(row, 'previous_module_sha256');
  return { sha256, version, size };
}

function parseCapabilities(row: AgentRow): string[] {
  const value = parseJson(row, 'capabilities');
  if (!Array.isArray(value) || !value.every((c) => typeof c === 'string')) throw corrupt(row, 'capabilities');
  return value;
}

function parseResources(row: AgentRow): AgentResources {
  const value = parseJson(row, 'resources') as { memory_limit?: unknown; cpu_shares?: unknown } | null;
  const memoryLimit = value?.memory_limit;
  const cpuShares = value?.cpu_shares;
  if (typeof memoryLimit !== 'number' || typeof cpuShares !== 'number') throw corrupt(row, 'resources');
  return { memoryLimit, cpuShares };
}

function parseDesiredState(row: AgentRow): DesiredState {
  if (row.desired_state === 'running' || row.desired_state === 'stopped') return row.desired_state;
  throw corrupt(row, 'desired_state');
}

function parseJson(row: AgentRow, column: 'capabilities' | 'resources'): unknown {
  try {
    return JSON.parse(row[column]);
  } catch {
    throw corrupt(row, column);
  }
}

function corrupt(row: AgentRow, column: string): StoreError {
  return new StoreError('corrupt', `agent ${row.agent_id}: unreadable ${column}`, { agent_id: row.agent_id, column });
}
