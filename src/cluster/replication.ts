/**
 * Replication of agents' modules (`cluster.replication_factor`): a deploy
 * is acknowledged once its module is stored on that many nodes, this one
 * and `factor − 1` others chosen by rendezvous hash over the alive members
 * (so every node would pick the same ones). A node that holds a module
 * already is only asked to keep it; the bytes travel once.
 *
 * With fewer alive members than the factor, the deploy is acknowledged
 * with the copies the reachable members hold (docs/cluster.md): a cluster
 * that lost nodes still takes deploys, and `ensure` adds the missing copies
 * as members come back or join. Modules are content-addressed: a node that
 * lacks one fetches it from a node that has it.
 */
import type { Clock } from '../../supervisors/clock.js';
import { isSvcError } from '../errors/svc-error.js';
import type { Logger } from '../telemetry/logger.js';
import type { Member } from './member.js';
import type { NodeClients, NodeRef } from './node-clients.js';
import { rendezvousRank } from './rendezvous.js';

/** A replica no live agent needs is kept this long before it is dropped (its agent's entry may still be on its way). */
export const REPLICA_GRACE_MS = 10 * 60_000;

export interface ReplicaStore {
  getModule(sha256: string): Uint8Array | undefined;
  replicas(): string[];
  dropReplica(sha256: string): void;
}

export interface ReplicationOptions {
  readonly nodeId: string;
  readonly factor: number;
  readonly clients: NodeClients;
  /** The other members reachable now (alive, with a gRPC address). */
  readonly peers: () => Member[];
  readonly store: ReplicaStore;
  readonly clock: Clock;
  readonly log: Logger;
}

export interface Replication {
  /** Stores the module on up to `factor − 1` other nodes; resolves with the node ids that hold it. */
  replicate(sha256: string, module: Uint8Array): Promise<string[]>;
  /** The other nodes known to hold the module (from this node's replicate calls). */
  holders(sha256: string): string[];
  /** Tops up the copies of these modules (this node's agents') to the factor; one pass at a time. */
  ensure(modules: readonly string[]): Promise<void>;
  /** The module from this node's store, or fetched from one of `from`; undefined when none has it. */
  fetch(sha256: string, from: readonly NodeRef[]): Promise<Uint8Array | undefined>;
  /** Drops replicas no live agent has referenced for `REPLICA_GRACE_MS`. */
  sweep(referenced: ReadonlySet<string>): void;
}

const notHeld = (error: unknown) => isSvcError(error) && error.code === 'NOT_FOUND';

export function createReplication(options: ReplicationOptions): Replication {
  const { nodeId, clients, store, clock, log } = options;
  const placed = new Map<string, Set<string>>();
  const unreferencedSince = new Map<string, number>();
  let ensuring: Promise<void> | undefined;

  async function storeOn(peer: Member, sha256: string, module: Uint8Array): Promise<boolean> {
    try {
      try {
        await clients.storeModule(peer, sha256, undefined);
      } catch (error) {
        if (!notHeld(error)) throw error;
        await clients.storeModule(peer, sha256, module);
      }
      return true;
    } catch (error) {
      log.warn({ node_id: peer.node_id, module_sha256: sha256, err: error }, 'could not store a module replica on a node');
      return false;
    }
  }

  async function replicate(sha256: string, module: Uint8Array): Promise<string[]> {
    const want = options.factor - 1;
    const peers = options.peers().filter((m) => m.node_id !== nodeId);
    const held = placed.get(sha256) ?? new Set<string>();
    placed.set(sha256, held);
    const alive = new Set(peers.map((m) => m.node_id));
    for (const id of held) if (!alive.has(id)) held.delete(id);
    const byId = new Map(peers.map((m) => [m.node_id, m]));
    // In rank order, a few at a time: the first `want` that store it are the replicas.
    for (const id of rendezvousRank(sha256, [...byId.keys()])) {
      if (held.size >= want) break;
      if (held.has(id)) continue;
      if (await storeOn(byId.get(id)!, sha256, module)) held.add(id);
    }
    if (held.size < want) log.warn({ module_sha256: sha256, replicas: held.size + 1, replication_factor: options.factor }, 'module stored on fewer nodes than cluster.replication_factor: not enough nodes reachable');
    return [...held].sort();
  }

  return {
    replicate,
    holders: (sha256) => [...(placed.get(sha256) ?? [])].sort(),
    ensure(modules) {
      ensuring ??= (async () => {
        const alive = new Set(options.peers().map((m) => m.node_id));
        for (const sha256 of new Set(modules)) {
          const held = [...(placed.get(sha256) ?? [])].filter((id) => alive.has(id));
          if (held.length >= Math.min(options.factor - 1, alive.size)) continue;
          const module = store.getModule(sha256);
          if (module !== undefined) await replicate(sha256, module);
        }
      })().finally(() => {
        ensuring = undefined;
      });
      return ensuring;
    },
    async fetch(sha256, from) {
      const own = store.getModule(sha256);
      if (own !== undefined) return own;
      for (const node of from) {
        try {
          return await clients.fetchModule(node, sha256);
        } catch (error) {
          log.warn({ node_id: node.node_id, module_sha256: sha256, err: error }, 'could not fetch a module from a node');
        }
      }
      return undefined;
    },
    sweep(referenced) {
      const now = clock.now();
      for (const sha256 of store.replicas()) {
        if (referenced.has(sha256)) {
          unreferencedSince.delete(sha256);
          continue;
        }
        const since = unreferencedSince.get(sha256) ?? now;
        unreferencedSince.set(sha256, since);
        if (now - since < REPLICA_GRACE_MS) continue;
        unreferencedSince.delete(sha256);
        store.dropReplica(sha256);
      }
    },
  };
}
