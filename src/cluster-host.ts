/**
 * What the cluster (src/cluster/server-cluster.ts) reads and does on this
 * node: the agents it hosts, for the registry, the calls of other nodes,
 * answered from this node alone (never forwarded again, so nodes whose
 * registries disagree cannot bounce a call between them), the modules it
 * keeps for other nodes, and the agents it takes over or lets go.
 */
import type { AgentHost } from './agents/agent-host.js';
import { fromStoreError } from './agents/agent-errors.js';
import type { AgentState } from './agents/agent-service-types.js';
import { toAgent } from './agents/agent-view.js';
import { sha256Hex } from './cluster/module-content.js';
import type { ClusterHost } from './cluster/server-cluster.js';
import { SvcError } from './errors/svc-error.js';
import { isStoreError } from './store/store-error.js';
import type { Store } from './store/types.js';

/** An agent at work is gossiped as running: its state changes with each message, the registry's need not. */
const gossiped = (state: AgentState): AgentState => (state === 'executing' ? 'running' : state);

const notRunning = () => new SvcError('UNAVAILABLE', 'this node\'s agents are not running', { reason: 'starting' });

export interface ClusterHostParts {
  host(): AgentHost | undefined;
  store(): Store | undefined;
  nodeId: string;
  /** A watch from another node is buffered as a client's stream is (`server.stream_buffer_size`, `stream_buffer_bytes`). */
  streamBuffer: { bufferSize: number; bufferBytes: number };
}

export function createClusterHost(parts: ClusterHostParts, localChanged: () => void): ClusterHost {
  const notFound = (id: string) => new SvcError('NOT_FOUND', `agent ${id} not found on this node`, { agent_id: id });
  const storeOf = (): Store => {
    const store = parts.store();
    if (store === undefined) throw notRunning();
    return store;
  };
  const hostOf = (): AgentHost => {
    const host = parts.host();
    if (host === undefined) throw notRunning();
    return host;
  };
  const storing = <T>(run: () => T): T => {
    try {
      return run();
    } catch (error) {
      throw isStoreError(error) ? fromStoreError(error) : error;
    }
  };
  /** The agents `suspend` stopped. */
  const suspended = new Set<string>();
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
        memory_limit: record.resources.memoryLimit,
        cpu_shares: record.resources.cpuShares,
      }));
    },
    local() {
      const host = parts.host();
      if (host === undefined) return undefined;
      return {
        deliver: (message) => host.deliverForwarded(message),
        watch(agentId, write) {
          if (host.get(agentId) === undefined) throw notFound(agentId);
          return host.bus.connect({ agent_id: agentId }, write, parts.streamBuffer);
        },
        async get(agentId) {
          const runtime = host.get(agentId);
          if (runtime === undefined) throw notFound(agentId);
          return toAgent(runtime.record, runtime);
        },
        async undeploy(agentId) {
          if (host.get(agentId) === undefined) throw notFound(agentId);
          await storing(() => host.remove(agentId));
          localChanged();
        },
        async storeModule(sha256, module) {
          const bytes = module ?? storing(() => host.store.getModule(sha256));
          if (bytes === undefined) throw new SvcError('NOT_FOUND', `module ${sha256} is not stored on this node`, { module_sha256: sha256 });
          if (sha256Hex(bytes) !== sha256) throw new SvcError('INVALID_ARGUMENT', `the module does not hash to ${sha256}`, { field: 'module', reason: 'sha256_mismatch' });
          storing(() => host.store.putReplica(bytes, Date.now()));
        },
        async fetchModule(sha256) {
          const bytes = storing(() => host.store.getModule(sha256));
          if (bytes === undefined) throw new SvcError('NOT_FOUND', `module ${sha256} is not stored on this node`, { module_sha256: sha256 });
          return bytes;
        },
      };
    },
    getMeta: (key) => parts.store()?.getMeta(key),
    setMeta(key, value) {
      parts.store()?.setMeta(key, value);
    },
    getModule: (sha256) => parts.store()?.getModule(sha256),
    replicas: () => parts.store()?.replicas() ?? [],
    dropReplica(sha256) {
      storeOf().dropReplica(sha256);
    },
    async capture(agentId) {
      return hostOf().captureAgent(agentId);
    },
    async adopt(agent, module, state) {
      const host = hostOf();
      const admitted = await host.admission.admit(module);
      const maxMemory = host.settings.maxMemoryBytes;
      await host.deploy(
        {
          agentId: agent.agent_id,
          name: agent.name,
          capabilities: [...agent.capabilities],
          resources: { memoryLimit: agent.memory_limit > 0 ? agent.memory_limit : maxMemory, cpuShares: agent.cpu_shares },
          desiredState: 'running',
          nodeId: parts.nodeId,
          createdAt: agent.created_at,
        },
        module,
        admitted,
        state,
      );
    },
    async suspend() {
      const host = hostOf();
      const ids = [...host.store.allAgents()].map((record) => record.agentId).filter((id) => host.get(id) !== undefined);
      for (const id of ids) suspended.add(id);
      await Promise.all(ids.map((id) => host.stopAgent(id)));
      localChanged();
    },
    async resume() {
      const host = hostOf();
      const ids = [...suspended].filter((id) => host.get(id) !== undefined);
      suspended.clear();
      await Promise.all(ids.map((id) => host.restart(id)));
      localChanged();
    },
    async drop(agentId) {
      suspended.delete(agentId);
      const host = hostOf();
      if (host.get(agentId) !== undefined) await host.remove(agentId);
      else if (host.store.getAgent(agentId) !== undefined) host.store.deleteAgent(agentId);
    },
  };
}
