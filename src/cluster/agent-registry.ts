/**
 * The cluster's agent registry: `agent_id → node_id, name, state,
 * module_sha256, version` for every agent in the cluster, spread through the
 * membership delegate: each change piggybacked on gossip (retransmitted like
 * membership news), the whole registry in every push-pull. Each node writes
 * only the entries of the agents it hosts (`reconcile`); an undeploy leaves
 * a tombstone, kept `tombstoneLifetimeMs`, so a late copy of the entry does
 * not bring the agent back.
 *
 * A node that restarts forgets its versions. When its own entry comes back
 * from the cluster at a version at least as high as what it wrote, it
 * writes the entry again above it (as a member refutes an accusation), or a
 * tombstone when it no longer hosts that agent. Until its first `reconcile`
 * (a restarted node syncs before it restores its agents) it only listens.
 *
 * An agent moves (failover, hand-over) when another node writes its entry
 * at a higher version. The node that takes an agent over says so first
 * (`adopt`), so its next reconcile writes above the old owner's entry; a
 * node that finds an agent it runs owned elsewhere at a version above its
 * own lets it go (`onLost`), so two copies never both stay.
 */
import type { Clock } from '../../supervisors/clock.js';
import { createBroadcastQueue } from './broadcast-queue.js';
import type { MembershipDelegate } from './membership-delegate.js';
import { asRegistryEntry, sameContent, supersedes, type RegistryEntry } from './registry-entry.js';

/** What this node hosts, as `reconcile` reads it from the agent host. */
export type LocalAgent = Omit<RegistryEntry, 'node_id' | 'version' | 'deleted'>;

export interface AgentRegistryOptions {
  readonly nodeId: string;
  readonly clock: Clock;
  readonly retransmitMult: number;
  readonly memberCount: () => number;
  readonly tombstoneLifetimeMs: number;
  /** An agent this node runs is now another node's (a failover or hand-over won elsewhere): stop and forget it here. */
  readonly onLost?: (agentId: string) => void;
  /** An entry was written here or merged from another node (its owner may have changed). */
  readonly onStored?: (entry: RegistryEntry) => void;
}

export interface AgentRegistry {
  readonly delegate: MembershipDelegate;
  /** Writes this node's entries from what it hosts now: new or changed ones at a higher version, vanished ones as tombstones. */
  reconcile(local: readonly LocalAgent[]): void;
  /** The next reconcile writes this agent's entry as this node's, above whoever held it (a failover or hand-over). */
  adopt(agentId: string): void;
  /** Merges an entry heard outside gossip (a hand-over's answer), as gossip would. */
  learn(entry: RegistryEntry): void;
  /** The entry held for an agent, tombstones included. */
  held(agentId: string): RegistryEntry | undefined;
  /** Whether the first reconcile has run: before it, this node's own entries coming back are only kept. */
  readonly reconciled: boolean;
  /** A live (not undeployed) entry. */
  get(agentId: string): RegistryEntry | undefined;
  /** Every live entry. */
  live(): RegistryEntry[];
  /** The live entry holding `name`, if any. */
  byName(name: string): RegistryEntry | undefined;
  /** Live agents per node id. */
  countByNode(): Map<string, number>;
  /** Forgets tombstones older than their lifetime. */
  sweep(): void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function encode(entries: readonly RegistryEntry[]): Uint8Array {
  return encoder.encode(JSON.stringify({ entries }));
}

function decode(bytes: Uint8Array): RegistryEntry[] {
  let doc: unknown;
  try {
    doc = JSON.parse(decoder.decode(bytes));
  } catch {
    return [];
  }
  const list = (doc as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(list)) return [];
  return list.map(asRegistryEntry).filter((e): e is RegistryEntry => e !== undefined);
}

export function createAgentRegistry(options: AgentRegistryOptions): AgentRegistry {
  const { nodeId, clock } = options;
  const entries = new Map<string, RegistryEntry>();
  /** When each tombstone was first held here (clock ms). */
  const buried = new Map<string, number>();
  /** What this node hosts, from its last reconcile. */
  const hosted = new Map<string, LocalAgent>();
  /** Agents this node takes over: their next write goes above another node's entry. */
  const adopting = new Set<string>();
  let reconciled = false;
  const queue = createBroadcastQueue({ retransmitMult: options.retransmitMult, memberCount: options.memberCount });

  function store(entry: RegistryEntry): void {
    entries.set(entry.agent_id, entry);
    if (entry.deleted) buried.set(entry.agent_id, buried.get(entry.agent_id) ?? clock.now());
    else buried.delete(entry.agent_id);
    options.onStored?.(entry);
  }

  function write(entry: RegistryEntry): void {
    store(entry);
    queue.push(entry.agent_id, encode([entry]));
  }

  function writeOwn(agentId: string, above: number): void {
    const agent = hosted.get(agentId);
    const held = entries.get(agentId);
    if (agent !== undefined) write({ ...agent, node_id: nodeId, version: above + 1, deleted: false });
    else if (held !== undefined) write({ ...held, node_id: nodeId, version: above + 1, deleted: true });
  }

  function merge(incoming: RegistryEntry): void {
    const held = entries.get(incoming.agent_id);
    if (!supersedes(incoming, held)) return;
    if (incoming.node_id !== nodeId && hosted.has(incoming.agent_id) && !adopting.has(incoming.agent_id)) {
      store(incoming);
      hosted.delete(incoming.agent_id);
      options.onLost?.(incoming.agent_id);
      return;
    }
    if (incoming.node_id === nodeId && reconciled) {
      // Our own entry, written before a restart (or a copy of the one we hold): ours is the truth.
      const stale = hosted.has(incoming.agent_id) ? incoming.deleted || !sameContent(incoming, { ...hosted.get(incoming.agent_id)!, node_id: nodeId, deleted: false }) : !incoming.deleted;
      if (stale) {
        store(incoming);
        writeOwn(incoming.agent_id, incoming.version);
        return;
      }
    }
    store(incoming);
  }

  const delegate: MembershipDelegate = {
    broadcasts: (overhead, limit) => queue.take(limit, overhead),
    onMessage(payload) {
      for (const entry of decode(payload)) merge(entry);
    },
    localState: () => encode([...entries.values()]),
    mergeRemoteState(state) {
      for (const entry of decode(state)) merge(entry);
    },
  };

  return {
    delegate,
    reconcile(local) {
      const now = new Map(local.map((agent) => [agent.agent_id, agent]));
      if (!reconciled) {
        reconciled = true;
        // Entries of ours the cluster kept for agents this node no longer runs (it was down meanwhile).
        for (const held of entries.values()) if (held.node_id === nodeId && !held.deleted && !now.has(held.agent_id)) write({ ...held, version: held.version + 1, deleted: true });
      }
      for (const [id] of hosted) {
        if (now.has(id)) continue;
        hosted.delete(id);
        const held = entries.get(id);
        if (held !== undefined && held.node_id === nodeId && !held.deleted) write({ ...held, version: held.version + 1, deleted: true });
      }
      for (const agent of local) {
        const held = entries.get(agent.agent_id);
        if (held !== undefined && held.node_id !== nodeId && !adopting.has(agent.agent_id)) {
          // Another node wrote this agent after us: it runs there now.
          hosted.delete(agent.agent_id);
          options.onLost?.(agent.agent_id);
          continue;
        }
        adopting.delete(agent.agent_id);
        hosted.set(agent.agent_id, agent);
        const next = { ...agent, node_id: nodeId, deleted: false };
        if (held !== undefined && sameContent(held, next)) continue;
        write({ ...next, version: (held?.version ?? 0) + 1 });
      }
    },
    adopt(agentId) {
      adopting.add(agentId);
    },
    held: (agentId) => entries.get(agentId),
    learn: merge,
    get reconciled() {
      return reconciled;
    },
    get(agentId) {
      const entry = entries.get(agentId);
      return entry === undefined || entry.deleted ? undefined : entry;
    },
    live: () => [...entries.values()].filter((e) => !e.deleted),
    byName(name) {
      for (const entry of entries.values()) if (!entry.deleted && entry.name === name) return entry;
      return undefined;
    },
    countByNode() {
      const counts = new Map<string, number>();
      for (const entry of entries.values()) if (!entry.deleted) counts.set(entry.node_id, (counts.get(entry.node_id) ?? 0) + 1);
      return counts;
    },
    sweep() {
      const now = clock.now();
      for (const [id, at] of buried) {
        if (now - at < options.tombstoneLifetimeMs) continue;
        buried.delete(id);
        entries.delete(id);
      }
    },
  };
}
