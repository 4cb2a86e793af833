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
import { META_KEYS } from '../store/meta-keys.js';
import type { Logger } from '../telemetry/logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { createAgentRegistry, type LocalAgent } from './agent-registry.js';
import { createClusterAgents, type ClusterAgents } from './cluster-agents.js';
import { checkClusterSettings, openClusterNode } from './cluster-node.js';
import { createClusterHandlers, type LocalAgents } from './cluster-service-handlers.js';
import type { ClusterSettings } from './cluster-settings.js';
import { decodeKnownMembers, encodeKnownMembers, knownMembers, rejoinAddresses } from './known-members.js';
import { MEMBER_STATES } from './member.js';
import type { Membership } from './membership.js';
import { callKeyFrom } from './node-call-auth.js';
import { createNodeClients, type NodeClients } from './node-clients.js';
import { schedulePeriodic } from './periodic.js';

/** How often this node's registry entries are compared with what it hosts (a deploy or undeploy is written at once). */
export const RECONCILE_INTERVAL_MS = 1_000;

/** What the cluster reads and writes of this node. */
export interface ClusterHost {
  /** The agents this node hosts now; undefined while its agents do not run. */
  localAgents(): LocalAgent[] | undefined;
  /** This node's agents, as other nodes' calls reach them; undefined while they do not run. */
  local(): Omit<LocalAgents, 'deliver'> & { deliver(message: Message): RouteOutcome } | undefined;
  getMeta(key: string): string | undefined;
  setMeta(key: string, value: string): void;
}

export interface ServerClusterOptions {
  readonly nodeId: string;
  readonly host: ClusterHost;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly clock: Clock;
  readonly random?: Random;
}

export interface ServerCluster {
  /** The ClusterService handlers, served on the gRPC listener from the start (UNAVAILABLE until `start`). */
  readonly implementation: UntypedServiceImplementation;
  /** The other nodes' agents; undefined until started. */
  agents(): ClusterAgents | undefined;
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
  const registry = createAgentRegistry({
    nodeId,
    clock,
    retransmitMult: settings.retransmit_mult,
    memberCount: () => membership?.counts().alive ?? 1,
    // As long as a dead member is remembered: a node coming back within it cannot bring an undeployed agent back.
    tombstoneLifetimeMs: settings.reconnect_timeout,
  });

  function reconcile(): void {
    const local = host.localAgents();
    if (local !== undefined) registry.reconcile(local);
    registry.sweep();
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

  const implementation = createClusterHandlers({
    key,
    now: () => Date.now(),
    local: () => {
      const local = agents === undefined ? undefined : host.local();
      if (local === undefined || agents === undefined) return undefined;
      const cluster = agents;
      return {
        ...local,
        deliver(message, fromNode) {
          cluster.rememberClient(message.sender, fromNode);
          return local.deliver(message);
        },
      };
    },
  });

  return {
    implementation,
    agents: () => agents,
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
      });
      countMembers();
      clients = createNodeClients({ nodeId, key, now: () => Date.now() });
      agents = createClusterAgents({
        nodeId,
        members: () => current.members(),
        member: (id) => current.member(id),
        registry,
        clients,
        forwarded: () => metrics.clusterMessagesForwarded.inc(),
        localChanged: reconcile,
      });
      reconcile();
      stopReconcile = schedulePeriodic(clock, { next: () => 1 }, () => RECONCILE_INTERVAL_MS, reconcile);
      const targets = rejoinAddresses(settings.seeds, lastKnown(), current.address);
      const joined = targets.length === 0 ? { contacted: [], failed: [] } : await current.join(targets);
      log.info({ node_id: nodeId, address: current.address, contacted: joined.contacted, failed: joined.failed, members: current.counts().alive }, 'cluster joined');
    },
    stop() {
      stopping ??= (async () => {
        stopReconcile?.();
        if (membership !== undefined) {
          await membership.leave();
          await membership.stop();
        }
        clients?.close();
        agents = undefined;
      })();
      return stopping;
    },
  };
}
