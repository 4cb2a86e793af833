/**
 * A server's part in a cluster (DESIGN.md section 10): its membership
 * started with the server's gRPC and HTTP addresses in its metadata, every
 * membership change logged (`node_id`, `from`, `to`, `reason`) and counted
 * in `svc_cluster_members{state}`, the members it knows kept in its store so
 * a restart rejoins through them as well as through the seeds, the agent
 * registry written from what this node hosts, and the node-to-node gRPC
 * service other nodes call.
 *
 * The settings are checked when this is created, before anything binds: a
 * non-loopback `cluster.addr` without `cluster.secret` stops the server.
 */
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Clock } from '../../supervisors/clock.js';
import type { Random } from '../../supervisors/random.js';
import type { RouteOutcome } from '../agents/router.js';
import type { Message } from '../bus/message.js';
import { SvcError } from '../errors/svc-error.js';
import type { InstanceSnapshot } from '../sandbox/types.js';
import { META_KEYS } from '../store/meta-keys.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { createAgentRegistry, type LocalAgent } from './agent-registry.js';
import { createClusterAgents, type ClusterAgents } from './cluster-agents.js';
import { createFailover, failoverTarget, type AdoptedAgent, type Failover } from './failover.js';
import type { HandOver } from './hand-over.js';
import type { RegistryEntry } from './registry-entry.js';
import { suspicionTimeoutMs } from './formulas.js';
import { createNameClaims } from './name-claims.js';
import { createReplication, type Replication } from './replication.js';
import { checkClusterSettings, openClusterNode } from './cluster-node.js';
import { createClusterHandlers, type LocalAgents } from './cluster-service-handlers.js';
import { createDeliverStreamService } from './deliver-stream-handler.js';
import type { ClusterSettings } from './cluster-settings.js';
import { decodeKnownMembers, encodeKnownMembers, knownMembers, rejoinAddresses } from './known-members.js';
import { MEMBER_STATES } from './member.js';
import { STREAM_TIMEOUT_MS, type Membership } from './membership.js';
import { callKeyFrom } from './node-call-auth.js';
import { createNodeClients, type NodeClients, type NodeRef } from './node-clients.js';
import type { ChannelCredentialsSource } from './node-tls.js';
import { schedulePeriodic } from './periodic.js';
import { createRemoteWatches, type RemoteWatches } from './remote-watch.js';
import { createHandOverHold } from './hand-over-hold.js';

/** A name claimed for a deploy stays claimed this long: the winner's registry entry has spread by then. */
export const NAME_CLAIM_TTL_MS = 10_000;

/** How often this node's registry entries are compared with what it hosts (a deploy or undeploy is written at once). */
export const RECONCILE_INTERVAL_MS = 1_000;

/** What the cluster reads and writes of this node. */
export interface ClusterHost {
  /** The agents this node hosts now; undefined while its agents do not run. */
  localAgents(): Array<Omit<LocalAgent, 'replicas'>> | undefined;
  /** This node's agents, as other nodes' calls reach them; undefined while they do not run. */
  local(): Omit<LocalAgents, 'deliver' | 'handOver' | 'claimName' | 'releaseName'> & { deliver(message: Message): RouteOutcome } | undefined;
  getMeta(key: string): string | undefined;
  setMeta(key: string, value: string): void;
  /** A stored module (an agent's or a replica); undefined when this node has none or its store is closed. */
  getModule(sha256: string): Uint8Array | undefined;
  /** Modules held as replicas. */
  replicas(): string[];
  dropReplica(sha256: string): void;
  /** Starts another node's agent here, keeping its id and name (a failover), from `state` when handed over. */
  adopt(agent: AdoptedAgent, module: Uint8Array, state?: InstanceSnapshot): Promise<void>;
  /** An agent's state for a hand-over; from then on it takes no messages. */
  capture(agentId: string): Promise<InstanceSnapshot | undefined>;
  /** Stops and forgets an agent that runs on another node now. */
  drop(agentId: string): Promise<void>;
  /** Stops every agent this node runs, keeping them (a minority side). */
  suspend(): Promise<void>;
  /** Starts again the agents `suspend` stopped that this node still hosts. */
  resume(): Promise<void>;
}

export interface ServerClusterOptions {
  readonly nodeId: string;
  readonly host: ClusterHost;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly clock: Clock;
  readonly random?: Random;
  /** The node-to-node channels' credentials (node-tls.ts); plaintext by default. */
  readonly channelCredentials?: ChannelCredentialsSource;
}

export interface ServerCluster {
  /** The ClusterService handlers, served on the gRPC listener from the start (UNAVAILABLE until `start`). */
  readonly implementation: UntypedServiceImplementation;
  /** Ends the DeliverStreams other nodes opened to this one, and refuses new ones: the gRPC listener stops. */
  readonly endStreams: () => void;
  /** The other nodes' agents; undefined until started. */
  agents(): ClusterAgents | undefined;
  /** The agents on other nodes this node's streams follow, each with the node its watch is in place on. */
  watching(): Map<string, string>;
  /** Binds the cluster port, joins the seeds and the members last known. */
  start(addresses: { grpc: string; http: string }): Promise<void>;
  /** Announces this node's departure (the others see `left`), then stops. Idempotent. */
  stop(): Promise<void>;
}

export function createServerCluster(settings: ClusterSettings, options: ServerClusterOptions): ServerCluster {
  const { nodeId, host, log, metrics, clock } = options;
  const secret = checkClusterSettings(settings);
  const key = callKeyFrom(secret);
  let membership: Membership | undefined;
  let clients: NodeClients | undefined;
  let agents: ClusterAgents | undefined;
  let stopReconcile: (() => void) | undefined;
  let stopping: Promise<void> | undefined;
  let replication: Replication | undefined;
  let failover: Failover | undefined;
  let watches: RemoteWatches | undefined;
  const holding = createHandOverHold(clock);
  /** Agents being let go here because another node runs them now. */
  const losing = new Map<string, Promise<void>>();
  const claims = createNameClaims({ now: () => clock.now(), ttlMs: NAME_CLAIM_TTL_MS, taken: (name) => registry.byName(name)?.agent_id });
  const registry = createAgentRegistry({
    onLost: (agentId) => lose(agentId),
    onStored: (entry) => watches?.ownerChanged(entry.agent_id),
    nodeId,
    clock,
    retransmitMult: settings.retransmit_mult,
    memberCount: () => membership?.counts().alive ?? 1,
    // As long as a dead member is remembered: a node coming back within it cannot bring an undeployed agent back.
    tombstoneLifetimeMs: settings.reconnect_timeout,
  });

  function lose(agentId: string): void {
    if (losing.has(agentId)) return;
    log.info({ agent_id: agentId, node_id: registry.held(agentId)?.node_id }, 'agent runs on another node now: stopped and deleted here');
    const dropped = host
      .drop(agentId)
      .catch((err: unknown) => log.warn({ agent_id: agentId, err }, 'could not stop an agent another node runs now'))
      .finally(() => {
        losing.delete(agentId);
        reconcile();
      });
    losing.set(agentId, dropped);
  }

  /** Another node, leaving, hands this one an agent with its state. */
  async function takeHandOver(handOver: HandOver, fromNode: string): Promise<RegistryEntry> {
    const { entry } = handOver;
    const from = membership?.member(fromNode);
    const module = await replication?.fetch(entry.module_sha256, from === undefined ? [] : [from]);
    if (module === undefined) throw new SvcError('UNAVAILABLE', `module ${entry.module_sha256} could not be fetched from node ${fromNode}`, { reason: 'module_unavailable', agent_id: entry.agent_id });
    registry.learn(entry);
    registry.adopt(entry.agent_id);
    await host.adopt(
      { agent_id: entry.agent_id, name: entry.name, capabilities: entry.capabilities, memory_limit: entry.memory_limit ?? 0, cpu_shares: entry.cpu_shares ?? 0, created_at: entry.created_at },
      module,
      handOver.snapshot,
    );
    reconcile();
    const written = registry.get(entry.agent_id);
    if (written === undefined || written.node_id !== nodeId) throw new SvcError('INTERNAL', `agent ${entry.agent_id} started but its entry was not written here`);
    log.info({ agent_id: entry.agent_id, name: entry.name, from: fromNode, to: nodeId, state_kept: handOver.snapshot !== undefined }, 'agent handed over');
    return written;
  }

  /** A deploy here claims its name with every alive peer before it is acknowledged. */
  async function claimName(name: string, agentId: string, peers: readonly NodeRef[], nodeClients: NodeClients): Promise<void> {
    const conflict = () => new SvcError('ALREADY_EXISTS', `an agent named "${name}" already exists`, { field: 'name', name, reason: 'conflict' });
    if (!claims.claim({ name, agent_id: agentId, node_id: nodeId })) throw conflict();
    const answers = await Promise.all(
      peers.map((peer) =>
        nodeClients.claimName(peer, name, agentId).catch((err: unknown) => {
          log.warn({ node_id: peer.node_id, name, err }, 'a node did not answer a name claim; deploying without its consent');
          return true;
        }),
      ),
    );
    if (answers.includes(false) || claims.heldByOther(name, agentId)) throw conflict();
  }

  /** A deploy here failed: its claim is dropped here and on every alive peer that answers (the others keep it until it expires). */
  async function releaseName(name: string, agentId: string, peers: readonly NodeRef[], nodeClients: NodeClients): Promise<void> {
    claims.release(name, agentId, nodeId);
    await Promise.all(
      peers.map((peer) =>
        nodeClients.releaseName(peer, name, agentId).catch((err: unknown) => log.warn({ node_id: peer.node_id, name, err }, 'a node did not answer the release of a name claim; it holds the name until the claim expires')),
      ),
    );
  }

  /** Leaving: each agent goes, with its state, to the node that would fail it over; then this node lets it go. */
  async function handOverAll(current: Membership, nodeClients: NodeClients): Promise<void> {
    const peers = current.members().filter((m) => m.node_id !== nodeId && m.state === 'alive' && m.grpc_address !== '');
    if (peers.length === 0) return;
    const ids = peers.map((m) => m.node_id);
    const own = registry.live().filter((entry) => entry.node_id === nodeId);
    await Promise.all(
      own.map(async (entry) => {
        const target = peers.find((m) => m.node_id === failoverTarget(entry, ids))!;
        // From the snapshot on, the agent takes no messages here: they wait for the other node.
        holding.begin(entry.agent_id);
        try {
          const snapshot = await host.capture(entry.agent_id);
          const written = await nodeClients.handOver(target, { entry, snapshot });
          if (written !== undefined) registry.learn(written);
          holding.release(entry.agent_id, (message) => {
            metrics.clusterMessagesForwarded.inc();
            return nodeClients.deliver(target, message);
          });
        } catch (err) {
          holding.refuse(entry.agent_id, `agent ${entry.agent_id} could not be handed over to node ${target.node_id}`);
          log.warn({ agent_id: entry.agent_id, node_id: target.node_id, err }, 'could not hand an agent over; it fails over without its state once this node has left');
        }
      }),
    );
    await Promise.all(losing.values());
  }

  function reconcile(): void {
    const local = host.localAgents();
    if (local !== undefined) registry.reconcile(local.map((agent) => ({ ...agent, replicas: replication?.holders(agent.module_sha256) ?? [] })));
    registry.sweep();
  }

  /** Each second: the registry written, missing module copies made, failover and the majority rule checked. */
  function tick(): void {
    reconcile();
    const local = host.localAgents();
    if (replication !== undefined && local !== undefined) {
      const modules = local.map((agent) => agent.module_sha256);
      void replication.ensure(modules).then(reconcile, (err: unknown) => log.warn({ err }, 'could not top up module replicas'));
      replication.sweep(new Set([...modules, ...registry.live().map((entry) => entry.module_sha256)]));
    }
    failover?.check();
  }

  function countMembers(): void {
    const counts = membership?.counts();
    if (counts === undefined) return;
    for (const state of MEMBER_STATES) metrics.clusterMembers.set({ state }, counts[state]);
  }

  function remember(): void {
    if (membership === undefined) return;
    try {
      host.setMeta(META_KEYS.clusterMembers, encodeKnownMembers(knownMembers(membership.members(), nodeId)));
    } catch (err) {
      log.warn({ err }, 'could not keep the cluster members in the store');
    }
  }

  function lastKnown() {
    const text = host.getMeta(META_KEYS.clusterMembers);
    if (text === undefined) return [];
    try {
      return decodeKnownMembers(text);
    } catch (err) {
      log.warn({ err }, 'the cluster members kept in the store cannot be read; joining through the seeds alone');
      return [];
    }
  }

  function localAgents(): LocalAgents | undefined {
    const local = agents === undefined ? undefined : host.local();
    if (local === undefined || agents === undefined) return undefined;
    const cluster = agents;
    return {
      ...local,
      deliver(message, fromNode) {
        cluster.rememberClient(message.sender, fromNode);
        const outcome = local.deliver(message);
        if (outcome.ok || outcome.reason !== 'unknown_receiver' || !holding.holds(message.receiver)) return outcome;
        return { ok: true, forwarded: holding.hold(message) };
      },
      handOver: takeHandOver,
      claimName: (name, agentId, fromNode) => claims.claim({ name, agent_id: agentId, node_id: fromNode }),
      releaseName: (name, agentId, fromNode) => claims.release(name, agentId, fromNode),
    };
  }

  const deliverStreams = createDeliverStreamService({ key, now: () => Date.now(), local: localAgents });
  const implementation = { ...createClusterHandlers({ key, now: () => Date.now(), local: localAgents }), DeliverStream: deliverStreams.handler };

  return {
    implementation,
    endStreams: () => deliverStreams.endAll(),
    agents: () => agents,
    watching: () => watches?.open() ?? new Map(),
    async start(addresses) {
      membership = await openClusterNode(settings, {
        nodeId,
        grpcAddress: addresses.grpc,
        httpAddress: addresses.http,
        delegate: registry.delegate,
        clock,
        ...(options.random === undefined ? {} : { random: options.random }),
        onTransportError: (err) => log.warn({ err }, 'cluster transport error'),
      });
      const current = membership;
      current.onChange((change) => {
        log.info({ node_id: change.node_id, from: change.from, to: change.to, reason: change.reason, incarnation: change.incarnation, by: change.by }, 'cluster member changed');
        countMembers();
        remember();
        failover?.check();
      });
      countMembers();
      const nodeClients = createNodeClients({
        nodeId,
        key,
        now: () => Date.now(),
        clock,
        ...(options.channelCredentials === undefined ? {} : { credentials: options.channelCredentials }),
        streamFailed: (grpcAddress, reason) => {
          const node = current.members().find((m) => m.grpc_address === grpcAddress);
          log.warn({ node_id: node?.node_id, grpc_address: grpcAddress, reason }, 'node-to-node stream failed: the messages on it are refused');
        },
      });
      clients = nodeClients;
      const peers = () => current.members().filter((m) => m.node_id !== nodeId && m.state === 'alive' && m.grpc_address !== '');
      const copies = createReplication({ nodeId, factor: settings.replication_factor ?? 1, clients: nodeClients, peers, store: host, clock, log });
      replication = copies;
      failover = createFailover({
        nodeId,
        members: () => current.members(),
        registry,
        replication: copies,
        host,
        clock,
        reach: (id) => current.reach(id, settings.probe_timeout),
        sync: (id) => current.sync(id, STREAM_TIMEOUT_MS),
        minorityGraceMs: () => suspicionTimeoutMs(settings.suspicion_mult, current.counts().alive + current.counts().suspect + current.counts().dead, settings.probe_interval),
        log,
        failedOver: () => metrics.clusterFailovers.inc(),
        localChanged: reconcile,
      });
      const follows = createRemoteWatches({
        nodeId,
        ownerOf: (agentId) => registry.get(agentId)?.node_id,
        reachable: (id) => {
          const member = current.member(id);
          return member !== undefined && (member.state === 'alive' || member.state === 'suspect') && member.grpc_address !== '' ? member : undefined;
        },
        clients: nodeClients,
        clock,
        log,
      });
      watches = follows;
      agents = createClusterAgents({
        nodeId,
        members: () => current.members(),
        member: (id) => current.member(id),
        registry,
        clients: nodeClients,
        forwarded: () => metrics.clusterMessagesForwarded.inc(),
        localChanged: reconcile,
        replicate: (sha256, module) => copies.replicate(sha256, module).then(() => undefined),
        claimName: (name, agentId) => claimName(name, agentId, peers(), nodeClients),
        releaseName: (name, agentId) => releaseName(name, agentId, peers(), nodeClients),
        movedAway: (agentId) => {
          const entry = registry.held(agentId);
          return entry !== undefined && entry.node_id !== nodeId;
        },
        follow: (agentId) => follows.follow(agentId),
        hold: (message) => (holding.holds(message.receiver) ? holding.hold(message) : undefined),
      });
      reconcile();
      stopReconcile = schedulePeriodic(clock, { next: () => 1 }, () => RECONCILE_INTERVAL_MS, tick);
      const targets = rejoinAddresses(settings.seeds, lastKnown(), current.address);
      const joined = targets.length === 0 ? { contacted: [], failed: [] } : await current.join(targets);
      log.info({ node_id: nodeId, address: current.address, contacted: joined.contacted, failed: joined.failed, members: current.counts().alive }, 'cluster joined');
    },
    stop() {
      stopping ??= (async () => {
        stopReconcile?.();
        if (membership !== undefined && clients !== undefined) await handOverAll(membership, clients);
        if (membership !== undefined) {
          await membership.leave();
          await membership.stop();
        }
        watches?.close();
        clients?.close();
        deliverStreams.endAll();
        agents = undefined;
      })();
      return stopping;
    },
  };
}
