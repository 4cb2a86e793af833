/**
 * The store seam: what the rest of the server may ask of durable state. The
 * SQLite implementation is `createStore` (store.ts); tests of other parts can
 * stand in their own.
 *
 * Times are integers, milliseconds since the Unix epoch, chosen by the caller
 * (whose clock is injected); the API formats them as RFC 3339.
 */

export type DesiredState = 'running' | 'stopped';

export interface AgentResources {
  /** Bytes of linear memory the agent may use. */
  memoryLimit: number;
  /** Relative CPU weight against the other agents. */
  cpuShares: number;
}

/** What deploy writes. */
export interface NewAgent {
  agentId: string;
  /** Unique in the instance: a second agent with the same name is a `conflict`. */
  name: string;
  capabilities: readonly string[];
  resources: AgentResources;
  desiredState: DesiredState;
  nodeId: string;
  createdAt: number;
}

/** A stored agent, as read back. */
export interface AgentRecord extends NewAgent {
  /** Lowercase hex sha256 of the module as deployed (before instrumentation). */
  moduleSha256: string;
  moduleSize: number;
  /** 1 at deploy, raised by each update that replaces the module; a rollback brings the previous number back. */
  moduleVersion: number;
  /** The module the agent ran before its last update or rollback; null before any. */
  previousModule: ModuleVersion | null;
  restartCount: number;
  updatedAt: number;
}

export interface ModuleVersion {
  sha256: string;
  version: number;
  size: number;
}

/**
 * What an update or a rollback writes. A new `module` with its bytes (stored
 * once by sha256) becomes the current one and the current one the previous;
 * `previousModule` says which module is kept as previous (the current one on
 * an update; on a rollback, the version being left).
 */
export interface ModuleChange {
  module?: { sha256: string; version: number; bytes?: Uint8Array };
  previousModule?: { sha256: string; version: number } | null;
  capabilities?: readonly string[];
  resources?: AgentResources;
  updatedAt: number;
}

/** The fields that change after deploy; `updatedAt` always does. */
export interface AgentPatch {
  restartCount?: number;
  desiredState?: DesiredState;
  updatedAt: number;
}

export interface ListOptions {
  /** 0 or absent: `DEFAULT_PAGE_SIZE`; above `MAX_PAGE_SIZE`: that maximum. */
  pageSize?: number;
  /** `nextPageToken` of the previous page; absent or '' for the first page. */
  pageToken?: string;
}

export interface AgentPage {
  agents: AgentRecord[];
  /** '' on the last page, as the API returns it. */
  nextPageToken: string;
}

export interface DeleteResult {
  moduleSha256: string;
  /** True when no agent referenced the module any more and it was removed with the agent. */
  moduleCollected: boolean;
  /** The agent's previous module, when it had one and no agent references it any more: removed too. */
  previousCollected?: string;
}

export interface Store {
  /** Absolute path of the SQLite file. */
  readonly path: string;
  /**
   * Stores the module (once per sha256) and the agent in one transaction; when
   * it returns, both are committed. Deploy acknowledges only after this.
   * Throws `conflict` for a taken name or agent id.
   */
  putAgentWithModule(agent: NewAgent, moduleBytes: Uint8Array): AgentRecord;
  getAgent(agentId: string): AgentRecord | undefined;
  /** Ordered by (createdAt, agentId); throws `invalid_page_token`. */
  listAgents(options?: ListOptions): AgentPage;
  /** Every agent, in list order, for restore at start. The caller may write to the store while iterating. */
  allAgents(): IterableIterator<AgentRecord>;
  countAgents(): number;
  /** Throws `not_found`. */
  updateAgent(agentId: string, patch: AgentPatch): void;
  /**
   * An update or rollback (UpdateAgent) in one transaction: stores a new
   * module's bytes, rewrites the agent's module, previous module,
   * capabilities and resources as `change` says, and removes a module no
   * agent references any more. Throws `not_found`.
   */
  changeModule(agentId: string, change: ModuleChange): AgentRecord;
  /**
   * Removes the agent and, in the same transaction, its module if now
   * unreferenced. Throws `not_found`. Deploys and undeploys are counted in
   * `meta` in their own transactions (meta-keys.ts).
   */
  deleteAgent(agentId: string): DeleteResult;
  getModule(sha256: string): Uint8Array | undefined;
  /** Whether the module is stored (for an agent or as a replica). */
  hasModule(sha256: string): boolean;
  /** Stores a module held for another node of a cluster (durable on return); returns its sha256. */
  putReplica(moduleBytes: Uint8Array, now: number): string;
  /** The sha256 of every module held as a replica. */
  replicas(): string[];
  /** Stops holding a replica; the module goes too unless a local agent references it. */
  dropReplica(sha256: string): void;
  getMeta(key: string): string | undefined;
  setMeta(key: string, value: string): void;
  /** `PRAGMA quick_check`: empty when the file is sound, else SQLite's first findings. */
  quickCheck(): string[];
  /** Idempotent. */
  close(): void;
}
