/**
 * The `Agent` resource clients see: the stored record merged with what only
 * the running node knows (state, counters, memory).
 */
import type { AgentRecord } from '../store/types.js';
import type { AgentRuntime } from './agent-runtime.js';
import type { Agent } from './agent-service-types.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** `runtime` undefined: stored but not on this node (its desired state is stopped). */
export function toAgent(record: AgentRecord, runtime: AgentRuntime | undefined): Agent {
  return {
    agent_id: record.agentId,
    name: record.name,
    capabilities: [...record.capabilities],
    // On this node, the limit the agent runs under (agent-runtime.ts); elsewhere, the stored one.
    resources: { memory_limit: runtime?.memoryLimitBytes ?? record.resources.memoryLimit, cpu_shares: record.resources.cpuShares },
    state: runtime?.visibleState ?? 'stopped',
    node_id: record.nodeId,
    module_sha256: record.moduleSha256,
    module_size: record.moduleSize,
    restart_count: runtime?.record.restartCount ?? record.restartCount,
    messages_received: runtime?.messagesReceived ?? 0,
    messages_sent: runtime?.messagesSent ?? 0,
    memory_bytes: runtime?.memoryBytes ?? 0,
    throttled_seconds: (runtime?.throttledMs ?? 0) / 1000,
    created_at: iso(record.createdAt),
    updated_at: iso(runtime?.record.updatedAt ?? record.updatedAt),
    module_version: record.moduleVersion,
    ...(record.previousModule === null ? {} : { previous_module: { ...record.previousModule } }),
  };
}
