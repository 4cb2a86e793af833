/**
 * Agents in the simulated cluster (simulation.ts): each node with the
 * server's own registry, failover and majority rule over its membership, and
 * a model of its agent host that keeps only what the rule acts on (which
 * agents the node hosts, and whether each runs). So a simulation replays a
 * cut, the failover on the majority side, the minority stopping its agents,
 * and the heal, from its seed, in simulated time.
 */
import { createAgentRegistry, type AgentRegistry } from './agent-registry.js';
import { createFailover, type Failover } from './failover.js';
import { STREAM_TIMEOUT_MS } from './membership.js';
import { suspicionTimeoutMs } from './formulas.js';
import { sha256Hex } from './module-content.js';
import { createNodeClients } from './node-clients.js';
import { schedulePeriodic } from './periodic.js';
import { createReplication } from './replication.js';
import { RECONCILE_INTERVAL_MS } from './server-cluster.js';
import type { SimCluster, SimNode } from './simulation.js';
import type { Logger } from '../telemetry/logger.js';

/** Every simulated agent runs this module, which every node holds (replication is not what is simulated). */
export const SIM_MODULE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);
const SIM_MODULE_SHA256 = sha256Hex(SIM_MODULE);

export type SimAgentState = 'running' | 'stopped';

export interface SimAgentNode {
  readonly node: SimNode;
  readonly registry: AgentRegistry;
  readonly failover: Failover;
  /** The agents this node hosts, and whether each runs. */
  readonly agents: ReadonlyMap<string, SimAgentState>;
  /** Agents started here in a dead node's place. */
  readonly failovers: () => number;
  /** Deploys an agent here. */
  deploy(agentId: string): void;
  stop(): void;
}

/** Starts node `id` of `cluster` (joining through `seeds`) with the server's registry and failover over its membership. */
export async function startSimAgentNode(cluster: SimCluster, id: string, seeds: readonly string[], log: Logger): Promise<SimAgentNode> {
  const agents = new Map<string, SimAgentState>();
  const suspended = new Set<string>();
  let failovers = 0;
  /** The node, once started: the registry reads its member count. */
  const started: { node?: SimNode } = {};
  const registry = createAgentRegistry({
    nodeId: id,
    clock: cluster.clock,
    retransmitMult: cluster.settings.retransmit_mult,
    memberCount: () => started.node?.membership.counts().alive ?? 1,
    tombstoneLifetimeMs: cluster.settings.reconnect_timeout,
    // Another node runs it now: this node stops and forgets its copy, as the server does.
    onLost: (agentId) => {
      agents.delete(agentId);
      suspended.delete(agentId);
    },
  });
  const reconcile = () =>
    registry.reconcile(
      [...agents].map(([agentId, state]) => ({ agent_id: agentId, name: agentId, state, module_sha256: SIM_MODULE_SHA256, module_size: SIM_MODULE.byteLength, capabilities: [], created_at: 0, replicas: [] })),
    );
  const node = await cluster.start(id, seeds, registry.delegate);
  started.node = node;
  const membership = node.membership;
  const clients = createNodeClients({ nodeId: id, key: undefined, now: () => cluster.clock.now() });
  const replication = createReplication({
    nodeId: id,
    factor: 1,
    clients,
    peers: () => [],
    store: { getModule: (sha) => (sha === SIM_MODULE_SHA256 ? SIM_MODULE : undefined), replicas: () => [], dropReplica: () => undefined },
    clock: node.clock,
    log,
  });
  const failover = createFailover({
    nodeId: id,
    members: () => membership.members(),
    registry,
    replication,
    host: {
      async adopt(agent) {
        agents.set(agent.agent_id, 'running');
      },
      async suspend() {
        for (const agentId of agents.keys()) {
          agents.set(agentId, 'stopped');
          suspended.add(agentId);
        }
        reconcile();
      },
      async resume() {
        for (const agentId of suspended) if (agents.has(agentId)) agents.set(agentId, 'running');
        suspended.clear();
        reconcile();
      },
    },
    clock: node.clock,
    reach: (id) => membership.reach(id, cluster.settings.probe_timeout),
    sync: (id) => membership.sync(id, STREAM_TIMEOUT_MS),
    minorityGraceMs: () => suspicionTimeoutMs(cluster.settings.suspicion_mult, membership.members().filter((m) => m.state !== 'left').length, cluster.settings.probe_interval),
    log,
    failedOver: () => (failovers += 1),
    localChanged: reconcile,
  });
  const offChange = membership.onChange(() => failover.check());
  const stopTick = schedulePeriodic(node.clock, cluster.random, () => RECONCILE_INTERVAL_MS, () => {
    reconcile();
    failover.check();
  });
  reconcile();
  return {
    node,
    registry,
    failover,
    agents,
    failovers: () => failovers,
    deploy(agentId) {
      agents.set(agentId, 'running');
      reconcile();
    },
    stop() {
      offChange();
      stopTick();
      clients.close();
    },
  };
}
