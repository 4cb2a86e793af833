/**
 * One entry of the cluster's agent registry and the rule that merges two
 * copies of it. Only the node hosting an agent writes its entry, raising
 * `version` each time; an entry taken over by another node (failover) is
 * written there at a higher version. So the higher version wins; at equal
 * versions (two writers that never saw each other) the lower node id does,
 * the same choice on every node.
 */

export interface RegistryEntry {
  readonly agent_id: string;
  readonly node_id: string;
  readonly name: string;
  /** The agent's state as its node last announced it (docs/cluster.md). */
  readonly state: string;
  readonly module_sha256: string;
  readonly module_size: number;
  readonly capabilities: readonly string[];
  /** Milliseconds since the epoch: lists are ordered by (created_at, agent_id) on every node. */
  readonly created_at: number;
  readonly version: number;
  /** Other nodes that store the module, so the agent can start there if its node dies (written by its node). */
  readonly replicas?: readonly string[];
  /** The agent's resources, for a node that starts it in a failover; 0 means the server's maximum. */
  readonly memory_limit?: number;
  readonly cpu_shares?: number;
  /** A tombstone: the agent was undeployed. */
  readonly deleted: boolean;
}

/** Whether `incoming` replaces `held`. */
export function supersedes(incoming: RegistryEntry, held: RegistryEntry | undefined): boolean {
  if (held === undefined) return true;
  if (incoming.version !== held.version) return incoming.version > held.version;
  if (incoming.node_id !== held.node_id) return incoming.node_id < held.node_id;
  // Same writer, same version: a tombstone is final.
  return incoming.deleted && !held.deleted;
}

/** Whether two entries say the same thing (a refresh that changes nothing is not gossiped). */
export function sameContent(a: RegistryEntry, b: Omit<RegistryEntry, 'version'>): boolean {
  return (
    a.node_id === b.node_id &&
    a.name === b.name &&
    a.state === b.state &&
    a.module_sha256 === b.module_sha256 &&
    a.deleted === b.deleted &&
    (a.replicas ?? []).join() === (b.replicas ?? []).join()
  );
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

/** Checks an entry decoded from another node's payload; undefined for anything malformed. */
export function asRegistryEntry(value: unknown): RegistryEntry | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const e = value as Record<string, unknown>;
  const strings = ['agent_id', 'node_id', 'name', 'state', 'module_sha256'] as const;
  for (const key of strings) if (typeof e[key] !== 'string') return undefined;
  if (e.agent_id === '' || e.node_id === '') return undefined;
  for (const key of ['module_size', 'created_at', 'version'] as const) if (!Number.isSafeInteger(e[key])) return undefined;
  if (typeof e.deleted !== 'boolean' || !isStringArray(e.capabilities)) return undefined;
  if (e.replicas !== undefined && !isStringArray(e.replicas)) return undefined;
  for (const key of ['memory_limit', 'cpu_shares'] as const) if (e[key] !== undefined && !Number.isSafeInteger(e[key])) return undefined;
  return {
    agent_id: e.agent_id as string,
    node_id: e.node_id as string,
    name: e.name as string,
    state: e.state as string,
    module_sha256: e.module_sha256 as string,
    module_size: e.module_size as number,
    capabilities: e.capabilities,
    created_at: e.created_at as number,
    version: e.version as number,
    deleted: e.deleted,
    ...(e.replicas === undefined ? {} : { replicas: e.replicas as string[] }),
    ...(e.memory_limit === undefined ? {} : { memory_limit: e.memory_limit as number }),
    ...(e.cpu_shares === undefined ? {} : { cpu_shares: e.cpu_shares as number }),
  };
}
