/**
 * The one use-case layer both doors (gRPC and REST) call (DESIGN.md section 1).
 * Transports translate their requests into these calls and the `SvcError`s
 * thrown here into their status codes; no business logic lives in a transport.
 * Shapes are snake_case, as the proto's JSON form keeps them.
 */
import type { BoundedSink } from '../bus/bounded-sink.js';
import type { BusEvent } from '../bus/events.js';
import type { BusFilter } from '../bus/filter.js';
import type { Message } from '../bus/message.js';
import type { AgentLogLine } from './agent-logs.js';

/** The lifecycle states of DESIGN.md section 6, as clients see them. */
export const AGENT_STATES = ['starting', 'running', 'executing', 'hibernated', 'restarting', 'stopping', 'stopped', 'failed'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

export interface AgentResources {
  /** Bytes of linear memory this agent may use; 0 means the server's per-agent maximum. */
  memory_limit: number;
  /** Relative CPU weight; 0 means the default weight. */
  cpu_shares: number;
}

/** Who is calling, for `client:<principal>` senders, audit and tracing. */
export interface CallContext {
  principal: string;
  trace_id: string;
  /** Epoch milliseconds after which the call should give up (DEADLINE_EXCEEDED). */
  deadline?: number;
}

export interface CallOptions {
  /** Milliseconds to wait for the reply; 0 or absent: the default. */
  timeout_ms?: number;
}

export interface DeployAgentRequest {
  name: string;
  wasm_module: Uint8Array;
  capabilities: string[];
  resources: AgentResources;
}

export interface Agent {
  agent_id: string;
  name: string;
  capabilities: string[];
  resources: AgentResources;
  state: AgentState;
  node_id: string;
  module_sha256: string;
  module_size: number;
  restart_count: number;
  messages_received: number;
  messages_sent: number;
  memory_bytes: number;
  /** Time held back by cpu_quota_per_agent since this server started. */
  throttled_seconds: number;
  /** RFC 3339. */
  created_at: string;
  updated_at: string;
  /** Absent where only the cluster registry knows the agent: its entry carries no module version. */
  module_version?: number;
  /** Absent before the first update. */
  previous_module?: ModuleVersion;
}

export interface ModuleVersion {
  sha256: string;
  version: number;
  size: number;
}

export interface ListAgentsRequest {
  page_size?: number;
  page_token?: string;
}

export interface ListAgentsResponse {
  agents: Agent[];
  /** Empty on the last page. */
  next_page_token: string;
  /**
   * In a cluster: the nodes that did not answer for their agents on this
   * page in time; those agents are shown as the registry knows them, their
   * counters 0. Absent when every node answered.
   */
  unreachable_nodes?: string[];
}

export interface HealthResponse {
  status: 'healthy' | 'degraded' | 'unavailable';
  version: string;
  agents: { running: number; capacity: number };
  trace_id: string;
}

/** One sample of one metric (`svc.v1.MetricSample`). */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The JSON form of `Metrics` and `GET /api/v1/metrics` (`svc.v1.MetricsResponse`). */
export interface MetricsSummary {
  samples: MetricSample[];
}

/** One member as `ListMembers` answers it. */
export interface ClusterMember {
  node_id: string;
  /** Gossip address, host:port. */
  address: string;
  grpc_address: string;
  http_address: string;
  state: 'alive' | 'suspect' | 'dead' | 'left';
  incarnation: number;
  /** Agents the registry places on it. */
  agents: number;
}

export interface AgentService {
  deploy(request: DeployAgentRequest, ctx: CallContext): Promise<{ agent_id: string }>;
  undeploy(agentId: string, ctx: CallContext): Promise<void>;
  list(request: ListAgentsRequest, ctx: CallContext): Promise<ListAgentsResponse>;
  get(agentId: string, ctx: CallContext): Promise<Agent>;
  /**
   * Restarts a failed or running agent with a fresh instance and a fresh
   * restart intensity; answers the agent once it runs again. NOT_FOUND for an
   * unknown agent, UNAVAILABLE (`agent_starting`) while it is starting.
   */
  restart(agentId: string, ctx: CallContext): Promise<Agent>;
  /**
   * Replaces an agent's module, capabilities or resources (agent-update.ts);
   * answers the agent as updated. `request` is an `UpdateAgentRequest` as a
   * door decoded it, checked here (update-request.ts).
   */
  update(request: unknown, ctx: CallContext): Promise<Agent>;
  /**
   * Validates client input (`validateMessage`: sender becomes `client:<principal>`;
   * `receiver` from the body or from `receiverOverride`, as `POST /agents/{id}/messages` gives it)
   * and queues it for delivery. Resolves once accepted (202), not once handled.
   */
  send(input: unknown, ctx: CallContext, receiverOverride?: string): Promise<{ message_id: string }>;
  /**
   * Request/reply: validates and queues `input` as `send` does, then waits for
   * the reply to the caller correlated by `in_reply_to` and `conversation_id`
   * (reply-waiter.ts), or the platform's `failure`. DEADLINE_EXCEEDED after
   * `timeout_ms` (0: 30 s; at most 600000) without one.
   */
  call(input: unknown, ctx: CallContext, options?: CallOptions): Promise<Message>;
  /**
   * A live stream of bus events matching `filter` (validated; INVALID_ARGUMENT otherwise),
   * written through `write` with back-pressure (see `createBoundedSink`); a slow consumer is
   * dropped with RESOURCE_EXHAUSTED `slow_consumer`. Close the sink when the client goes away.
   */
  subscribe(filter: unknown, write: (event: BusEvent) => void | Promise<unknown>, ctx: CallContext): BoundedSink;
  /** The agent's kept log lines, oldest first, the last `limit` (1..1000) when given (NOT_FOUND for an unknown agent). */
  logs(agentId: string, ctx: CallContext, limit?: number): Promise<{ lines: AgentLogLine[] }>;
  /**
   * The agent's log lines as it writes them, through `write` with
   * back-pressure as `subscribe` (a slow consumer is dropped). Close the sink
   * when the client goes away.
   */
  followLogs(agentId: string, write: (line: AgentLogLine) => void | Promise<unknown>, ctx: CallContext): BoundedSink;
  /** The agent's recent messages, newest last (NOT_FOUND for an unknown agent). */
  recentMessages(agentId: string, ctx: CallContext, limit?: number): Promise<Message[]>;
  health(ctx: CallContext): Promise<HealthResponse>;
  metrics(ctx: CallContext): Promise<MetricsSummary>;
  /** The cluster's members as this node sees them; only this node when it runs alone. */
  members(ctx: CallContext): Promise<{ members: ClusterMember[] }>;
}

export type { AgentLogLine, BusFilter };
