/**
 * What the cluster (src/cluster/server-cluster.ts) reads and does on this
 * node: the agents it hosts, for the registry, and the calls of other
 * nodes, answered from this node alone (never forwarded again, so nodes
 * whose registries disagree cannot bounce a call between them).
 */
import type { AgentHost } from './agents/agent-host.js';
import { fromStoreError } from './agents/agent-errors.js';
import type { AgentState } from './agents/agent-service-types.js';
import { toAgent } from './agents/agent-view.js';
import type { ClusterHost } from './cluster/server-cluster.js';
import { SvcError } from './errors/svc-error.js';
import { isStoreError } from './store/store-error.js';
import type { Store } from './store/types.js';

/** An agent at work is gossiped as running: its state changes with each message, the registry's need not. */
const gossiped = (state: AgentState): AgentState => (state === 'executing' ? 'running' : state);

export function createClusterHost(parts: { host(): AgentHost | undefined; store(): Store | undefined }, localChanged: () => void): ClusterHost {
  const notFound = (id: string) => new SvcError('NOT_FOUND', `agent ${id} not found on this node`, { agent_id: id });
  return {
    localAgents() {
      const host = parts.host();
      if (host === undefined) return undefined;
      return [...host.store.allAgents()].map((record) => ({
        agent_id: record.agentId,
        name: record.name,
        state: gossiped(host.get(record.agentId)?.visibleState ?? 'stopped'),
        module_sha256: record.moduleSha256,
        module_size: record.moduleSize,
        capabilities: [...record.capabilities],
        created_at: record.createdAt,
      }));
    },
    local() {
      const host = parts.host();
      if (host === undefined) return undefined;
      return {
        deliver: (message) => host.deliverForwarded(message),
        async get(agentId) {
          const runtime = host.get(agentId);
          if (runtime === undefined) throw notFound(agentId);
          return toAgent(runtime.record, runtime);
        },
        async undeploy(agentId) {
          if (host.get(agentId) === undefined) throw notFound(agentId);
          try {
            await host.remove(agentId);
          } catch (error) {
            throw isStoreError(error) ? fromStoreError(error) : error;
          }
          localChanged();
        },
      };
    },
    getMeta: (key) => parts.store()?.getMeta(key),
    setMeta(key, value) {
      parts.store()?.setMeta(key, value);
    },
  };
}
