/**
 * `RemoteAgents` (agents/remote-agents.ts) over the registry, the
 * membership and node-to-node gRPC: where another node's agent is, how a
 * message reaches it, and how a reply reaches a client that sent through
 * another node (the node remembers, per client, the node its last message
 * came from).
 */
import { AGENT_STATES, type Agent, type AgentState, type ClusterMember } from '../agents/agent-service-types.js';
import type { RemoteAgents } from '../agents/remote-agents.js';
import { CLIENT_PREFIX, type RouteOutcome } from '../agents/router.js';
import type { Observable } from 'rxjs';
import type { BusEvent } from '../bus/events.js';
import type { Message } from '../bus/message.js';
import { SvcError } from '../errors/svc-error.js';
import type { AgentRegistry } from './agent-registry.js';
import type { Member } from './member.js';
import type { NodeClients, NodeRef } from './node-clients.js';
import type { RegistryEntry } from './registry-entry.js';

/** How long a ListAgents waits for the nodes hosting its page's agents; a node slower than this is listed unreachable. */
export const COUNTERS_TIMEOUT_MS = 1_000;

/** Clients remembered for replies; the least recently heard of is forgotten first. */
export const MAX_CLIENT_ROUTES = 10_000;

export interface ClusterAgentsOptions {
  readonly nodeId: string;
  readonly members: () => Member[];
  readonly member: (nodeId: string) => Member | undefined;
  readonly registry: AgentRegistry;
  readonly clients: NodeClients;
  /** Counts each message sent on to another node. */
  readonly forwarded: () => void;
  readonly localChanged: () => void;
  readonly replicate: (sha256: string, module: Uint8Array) => Promise<void>;
  readonly claimName: (name: string, agentId: string) => Promise<void>;
  readonly releaseName: (name: string, agentId: string) => Promise<void>;
  readonly movedAway: (agentId: string) => boolean;
  readonly follow: (agentId: string) => Observable<BusEvent>;
  /** A message for an agent this node is handing over, held until the hand-over ends; undefined for any other. */
  readonly hold: (message: Message) => Promise<RouteOutcome> | undefined;
}

export interface ClusterAgents extends RemoteAgents {
  /** A message from `client:<principal>` arrived through `nodeId`: that client's replies go back there. */
  rememberClient(sender: string, nodeId: string): void;
}

const iso = (ms: number) => new Date(ms).toISOString();
const isState = (value: string): value is AgentState => (AGENT_STATES as readonly string[]).includes(value);

function toAgent(entry: RegistryEntry): Agent {
  return {
    agent_id: entry.agent_id,
    name: entry.name,
    capabilities: [...entry.capabilities],
    resources: { memory_limit: 0, cpu_shares: 0 },
    state: isState(entry.state) ? entry.state : 'stopped',
    node_id: entry.node_id,
    module_sha256: entry.module_sha256,
    module_size: entry.module_size,
    restart_count: 0,
    messages_received: 0,
    messages_sent: 0,
    memory_bytes: 0,
    throttled_seconds: 0,
    created_at: iso(entry.created_at),
    updated_at: iso(entry.created_at),
  };
}

const reachable = (member: Member | undefined): member is Member => member !== undefined && (member.state === 'alive' || member.state === 'suspect') && member.grpc_address !== '';

export function createClusterAgents(options: ClusterAgentsOptions): ClusterAgents {
  const { nodeId, registry, clients } = options;
  const clientRoutes = new Map<string, string>();

  /** The other node hosting `agentId`, if any. */
  function hostOf(agentId: string): RegistryEntry | undefined {
    const entry = registry.get(agentId);
    return entry !== undefined && entry.node_id !== nodeId ? entry : undefined;
  }

  function nodeRef(entry: RegistryEntry): NodeRef {
    const member = options.member(entry.node_id);
    if (!reachable(member)) throw new SvcError('UNAVAILABLE', `agent ${entry.agent_id} runs on node ${entry.node_id}, which this node cannot reach now`, { agent_id: entry.agent_id, node_id: entry.node_id, reason: 'node_unreachable' });
    return member;
  }

  function send(target: Member, message: Message): Promise<RouteOutcome> {
    options.forwarded();
    return clients.deliver(target, message);
  }

  return {
    forward(message) {
      if (message.receiver.startsWith(CLIENT_PREFIX)) {
        const via = clientRoutes.get(message.receiver);
        const member = via === undefined ? undefined : options.member(via);
        return reachable(member) ? send(member, message) : undefined;
      }
      const held = options.hold(message);
      if (held !== undefined) return held;
      const entry = hostOf(message.receiver);
      if (entry === undefined) return undefined;
      const member = options.member(entry.node_id);
      if (!reachable(member)) return Promise.resolve({ ok: false, reason: 'unknown_receiver', detail: `its node ${entry.node_id} cannot be reached` });
      return send(member, message);
    },
    list: () => registry.live().filter((entry) => entry.node_id !== nodeId).map(toAgent),
    async counted(page) {
      const { agents } = page;
      const byNode = new Map<string, string[]>();
      for (const agent of agents) {
        const entry = hostOf(agent.agent_id);
        if (entry !== undefined) byNode.set(entry.node_id, [...(byNode.get(entry.node_id) ?? []), agent.agent_id]);
      }
      const unreachable: string[] = [];
      const answered = new Map<string, Agent>();
      await Promise.all(
        [...byNode].map(async ([node, ids]) => {
          const member = options.member(node);
          try {
            if (!reachable(member)) throw new Error('not reachable');
            for (const agent of await clients.getAgents(member, ids, COUNTERS_TIMEOUT_MS)) answered.set(agent.agent_id, agent);
          } catch {
            unreachable.push(node);
          }
        }),
      );
      const listed = agents.map((agent) => answered.get(agent.agent_id) ?? agent);
      return unreachable.length === 0 ? { ...page, agents: listed } : { ...page, agents: listed, unreachable_nodes: unreachable.sort() };
    },
    isRemote: (agentId) => hostOf(agentId) !== undefined,
    async get(agentId) {
      const entry = hostOf(agentId);
      if (entry === undefined) throw new SvcError('NOT_FOUND', `agent ${agentId} not found`, { agent_id: agentId });
      return clients.getAgent(nodeRef(entry), agentId);
    },
    async undeploy(agentId) {
      const entry = hostOf(agentId);
      if (entry === undefined) throw new SvcError('NOT_FOUND', `agent ${agentId} not found`, { agent_id: agentId });
      await clients.undeploy(nodeRef(entry), agentId);
    },
    nameTaken(name) {
      const entry = registry.byName(name);
      return entry !== undefined && entry.node_id !== nodeId;
    },
    members() {
      const counts = registry.countByNode();
      return options.members().map((m): ClusterMember => ({ ...m, agents: counts.get(m.node_id) ?? 0 }));
    },
    localChanged: () => options.localChanged(),
    replicate: (sha256, module) => options.replicate(sha256, module),
    claimName: (name, agentId) => options.claimName(name, agentId),
    releaseName: (name, agentId) => options.releaseName(name, agentId),
    movedAway: (agentId) => options.movedAway(agentId),
    follow: (agentId) => options.follow(agentId),
    rememberClient(sender, via) {
      if (!sender.startsWith(CLIENT_PREFIX) || via === nodeId) return;
      clientRoutes.delete(sender);
      clientRoutes.set(sender, via);
      if (clientRoutes.size > MAX_CLIENT_ROUTES) clientRoutes.delete(clientRoutes.keys().next().value as string);
    },
  };
}
