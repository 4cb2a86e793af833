/**
 * Names claimed cluster-wide before a deploy is acknowledged: two nodes
 * that deploy one name within a gossip round cannot both succeed. A deploy
 * claims its name here and with every alive peer; each node accepts a
 * claim unless the name is taken (its registry lists another agent under
 * it) or held by a live claim of a lower agent id (ULIDs: the earlier
 * deploy wins, the same choice on every node). A node's own later claim
 * replaces its earlier one (a retry after a failed deploy). A failed
 * deploy releases its claim everywhere, so a retry through another node is
 * not refused meanwhile. Claims expire after `ttlMs`, by when the winner's
 * registry entry has spread.
 */

export interface Claim {
  readonly name: string;
  readonly agent_id: string;
  readonly node_id: string;
}

export interface NameClaims {
  /** Whether the claim is accepted; an accepted claim is held until `ttlMs` passes. */
  claim(claim: Claim): boolean;
  /** Drops the claim of `name` if `nodeId` holds it for `agentId`. */
  release(name: string, agentId: string, nodeId: string): void;
  /** Whether a live claim other than `agentId`'s holds the name. */
  heldByOther(name: string, agentId: string): boolean;
}

export interface NameClaimsOptions {
  readonly now: () => number;
  readonly ttlMs: number;
  /** The agent id the registry lists under `name`, if any. */
  readonly taken: (name: string) => string | undefined;
}

export function createNameClaims(options: NameClaimsOptions): NameClaims {
  const held = new Map<string, Claim & { readonly expires: number }>();

  function live(name: string): (Claim & { readonly expires: number }) | undefined {
    const claim = held.get(name);
    if (claim !== undefined && claim.expires <= options.now()) {
      held.delete(name);
      return undefined;
    }
    return claim;
  }

  return {
    claim(claim) {
      const owner = options.taken(claim.name);
      if (owner !== undefined && owner !== claim.agent_id) return false;
      const current = live(claim.name);
      if (current !== undefined && current.agent_id !== claim.agent_id && current.node_id !== claim.node_id && current.agent_id < claim.agent_id) return false;
      held.set(claim.name, { ...claim, expires: options.now() + options.ttlMs });
      return true;
    },
    release(name, agentId, nodeId) {
      const current = held.get(name);
      if (current !== undefined && current.agent_id === agentId && current.node_id === nodeId) held.delete(name);
    },
    heldByOther(name, agentId) {
      const current = live(name);
      return current !== undefined && current.agent_id !== agentId;
    },
  };
}
