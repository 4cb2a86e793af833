/**
 * What the agents' side asks of the cluster (src/cluster/ implements it),
 * so neither the router nor AgentService knows where peers run, and
 * `agents/` depends on nothing of the cluster. A node without a cluster has
 * none of it.
 */
import type { Observable } from 'rxjs';
import type { BusEvent } from '../bus/events.js';
import type { Message } from '../bus/message.js';
import type { Agent, CallContext, ClusterMember, ListAgentsResponse } from './agent-service-types.js';
import type { RouteOutcome } from './router.js';

export interface RemoteAgents {
  /**
   * Sends a message on to the node its receiver (an agent, or a client that
   * sent through another node) is on; undefined when the receiver is not on
   * another node. Resolves with that node's routing outcome.
   */
  forward(message: Message): Promise<RouteOutcome> | undefined;
  /** Agents hosted on other nodes, as the registry knows them. */
  list(): Agent[];
  /**
   * `agents` with each one hosted on another node as its node answers it
   * (counters included), and the nodes that did not answer in time, whose
   * agents stay as given.
   */
  counted(page: ListAgentsResponse): Promise<ListAgentsResponse>;
  /** Whether the agent is hosted on another node. */
  isRemote(agentId: string): boolean;
  /** The agent as its own node answers; NOT_FOUND when no node hosts it. */
  get(agentId: string, ctx: CallContext): Promise<Agent>;
  /** Undeploys an agent another node hosts, on that node. */
  undeploy(agentId: string): Promise<void>;
  /** Whether another node's agent holds this name. */
  nameTaken(name: string): boolean;
  members(): ClusterMember[];
  /** Tells the cluster this node's agents changed (a deploy, an undeploy), so the registry gossips it now. */
  localChanged(): void;
  /** Stores a deployed agent's module on other nodes (`cluster.replication_factor`); resolves once they hold it. */
  replicate(sha256: string, module: Uint8Array): Promise<void>;
  /** Claims `name` for a deploy of `agentId` with every alive node; ALREADY_EXISTS when another deploy holds it. */
  claimName(name: string, agentId: string): Promise<void>;
  /** Releases the claim of a deploy that failed, here and on every alive node. */
  releaseName(name: string, agentId: string): Promise<void>;
  /** Whether a stored agent of this node runs on another node now (it failed over while this node was down). */
  movedAway(agentId: string): boolean;
  /**
   * The events of an agent as the node hosting it publishes them, while that
   * is another node, followed across failovers and hand-overs; nothing while
   * this node hosts it (its own bus has them then).
   */
  follow(agentId: string): Observable<BusEvent>;
}
