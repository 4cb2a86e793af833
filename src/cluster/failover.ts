/**
 * Failover (docs/cluster.md, "When a node dies"): the agents of a member
 * declared dead start on the survivors, each on exactly one, keeping its
 * `agent_id` and name. Every node computes the same choice on its own: the
 * rendezvous winner for the agent's id among the alive members that hold
 * its module (all alive members when none does; the winner fetches it).
 * The winner says so in the registry (`adopt`), starts the agent and writes
 * its entry above the dead owner's.
 *
 * Only a side with a strict majority of the last known members fails over
 * (quorum.ts), and only once that majority answers a direct ping. A node that sees a minority for longer than the suspicion
 * timeout stops its own agents (shown `stopped`), and starts them again
 * once it sees half or more and has exchanged the registry with a majority,
 * unless another node has taken them meanwhile (the registry then lets them
 * go).
 */
import type { Clock } from '../../supervisors/clock.js';
import type { Logger } from '../telemetry/logger.js';
import type { AgentRegistry } from './agent-registry.js';
import type { Member } from './member.js';
import { majorityAnswers, quorumOf, type QuorumVerdict } from './quorum.js';
import type { RegistryEntry } from './registry-entry.js';
import type { Replication } from './replication.js';
import { rendezvousWinner } from './rendezvous.js';

/** An agent another node ran, as this node starts it in a failover. */
export interface AdoptedAgent {
  readonly agent_id: string;
  readonly name: string;
  readonly capabilities: readonly string[];
  readonly memory_limit: number;
  readonly cpu_shares: number;
  readonly created_at: number;
}

export interface FailoverHost {
  adopt(agent: AdoptedAgent, module: Uint8Array): Promise<void>;
  /** Stops this node's agents, keeping them (a minority side). */
  suspend(): Promise<void>;
  /** Starts again the agents `suspend` stopped that are still this node's. */
  resume(): Promise<void>;
}

export interface FailoverOptions {
  readonly nodeId: string;
  readonly members: () => Member[];
  readonly registry: AgentRegistry;
  readonly replication: Replication;
  readonly host: FailoverHost;
  readonly clock: Clock;
  /** Whether the member answers a direct ping now. */
  readonly reach: (nodeId: string) => Promise<boolean>;
  /** Whether an exchange of state (the registry) with the member completed now. */
  readonly sync: (nodeId: string) => Promise<boolean>;
  /** How long a minority may last before this node stops its agents: the suspicion timeout. */
  readonly minorityGraceMs: () => number;
  readonly log: Logger;
  /** Counts each agent this node started in a dead node's place. */
  readonly failedOver: () => void;
  /** The registry should be written again (an agent started here). */
  readonly localChanged: () => void;
}

export interface Failover {
  /** Runs on every membership change and periodically: fails over what is due, stops or resumes on the majority rule. */
  check(): void;
  readonly verdict: QuorumVerdict;
}

const gone = (member: Member | undefined) => member !== undefined && (member.state === 'dead' || member.state === 'left');

/** The node that should run `entry`'s agent, given the alive members; undefined when none can. */
export function failoverTarget(entry: RegistryEntry, alive: readonly string[]): string | undefined {
  const holders = (entry.replicas ?? []).filter((id) => alive.includes(id));
  return rendezvousWinner(entry.agent_id, holders.length > 0 ? holders : alive);
}

export function createFailover(options: FailoverOptions): Failover {
  const { nodeId, registry, replication, host, clock, log } = options;
  const inFlight = new Set<string>();
  let verdict: QuorumVerdict = 'majority';
  let minoritySince: number | undefined;
  let suspended = false;
  let confirming = false;
  let resuming = false;

  async function takeOver(entry: RegistryEntry, members: readonly Member[]): Promise<void> {
    const holders = new Set(entry.replicas ?? []);
    const sources = members.filter((m) => m.node_id !== nodeId && m.state === 'alive' && m.grpc_address !== '').sort((a, b) => Number(holders.has(b.node_id)) - Number(holders.has(a.node_id)));
    const module = await replication.fetch(entry.module_sha256, sources);
    if (module === undefined) {
      log.error({ agent_id: entry.agent_id, name: entry.name, module_sha256: entry.module_sha256, from: entry.node_id }, 'cannot fail an agent over: no reachable node stores its module');
      return;
    }
    registry.adopt(entry.agent_id);
    await host.adopt(
      { agent_id: entry.agent_id, name: entry.name, capabilities: entry.capabilities, memory_limit: entry.memory_limit ?? 0, cpu_shares: entry.cpu_shares ?? 0, created_at: entry.created_at },
      module,
    );
    options.failedOver();
    log.info({ agent_id: entry.agent_id, name: entry.name, from: entry.node_id, to: nodeId, version: entry.version + 1 }, 'agent failed over');
    options.localChanged();
  }

  /** The dead members' agents this node should start now. */
  function due(members: readonly Member[]): RegistryEntry[] {
    const byId = new Map(members.map((m) => [m.node_id, m]));
    const alive = members.filter((m) => m.state === 'alive').map((m) => m.node_id);
    return registry
      .live()
      .filter((entry) => entry.node_id !== nodeId && !inFlight.has(entry.agent_id) && gone(byId.get(entry.node_id)) && failoverTarget(entry, alive) === nodeId);
  }

  /**
   * Starts what is due once a majority has answered, and only for owners that
   * do not: a death heard late (a stale accusation gossiped as a cut heals)
   * names a member that is up. One confirmation at a time.
   */
  async function confirmAndFailOver(members: readonly Member[]): Promise<void> {
    const owners = [...new Set(due(members).map((entry) => entry.node_id))];
    const [answered, ownersAnswer] = await Promise.all([majorityAnswers(nodeId, members, options.reach), Promise.all(owners.map((id) => options.reach(id).catch(() => false)))]);
    if (!answered) {
      log.info({ node_id: nodeId }, 'agents of a dead member not failed over: a majority of the cluster did not answer');
      return;
    }
    const answering = owners.filter((_, i) => ownersAnswer[i] === true);
    if (answering.length > 0) log.info({ nodes: answering }, 'agents of a member declared dead not failed over: it still answers');
    const silent = new Set(owners.filter((_, i) => ownersAnswer[i] !== true));
    const now = options.members();
    if (quorumOf(now).verdict === 'majority') failOver(now, silent);
  }

  function failOverConfirmed(members: readonly Member[]): void {
    if (confirming || due(members).length === 0) return;
    confirming = true;
    confirmAndFailOver(members)
      .catch((error: unknown) => log.warn({ err: error }, 'could not ask the cluster for a majority'))
      .finally(() => {
        confirming = false;
      });
  }

  /** Starts the due agents of the owners found silent. */
  function failOver(members: readonly Member[], silent: ReadonlySet<string>): void {
    for (const entry of due(members).filter((e) => silent.has(e.node_id))) {
      inFlight.add(entry.agent_id);
      takeOver(entry, members)
        .catch((error: unknown) => log.warn({ agent_id: entry.agent_id, from: entry.node_id, err: error }, 'could not fail an agent over; trying again'))
        .finally(() => inFlight.delete(entry.agent_id));
    }
  }

  /** Starts this node's stopped agents once it holds the registry of a majority: those another node took meanwhile are let go by then. */
  function resumeSynced(): void {
    if (resuming) return;
    resuming = true;
    majorityAnswers(nodeId, options.members(), options.sync)
      .then((synced) => {
        if (!synced || !suspended || verdict === 'minority') return;
        suspended = false;
        log.info({ node_id: nodeId }, 'this node sees half or more of the cluster again: starting its agents');
        return host.resume();
      })
      .catch((error: unknown) => log.warn({ err: error }, 'could not start this node\'s agents again'))
      .finally(() => {
        resuming = false;
      });
  }

  function keepOrStop(): void {
    if (verdict !== 'minority') {
      minoritySince = undefined;
      if (suspended) resumeSynced();
      return;
    }
    minoritySince ??= clock.now();
    if (suspended || clock.now() - minoritySince <= options.minorityGraceMs()) return;
    suspended = true;
    log.warn({ node_id: nodeId, reason: 'cluster_minority' }, 'this node sees less than half of the cluster: stopping its agents');
    void host.suspend().catch((error: unknown) => log.warn({ err: error }, 'could not stop this node\'s agents'));
  }

  return {
    check() {
      const members = options.members();
      verdict = quorumOf(members).verdict;
      keepOrStop();
      if (verdict === 'majority' && registry.reconciled) failOverConfirmed(members);
    },
    get verdict() {
      return verdict;
    },
  };
}
