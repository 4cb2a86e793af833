/**
 * Every `svc_*` metric: name, type, help and labels. The names are a public
 * contract (dashboards and alerts are built on them; issue 5), so they are
 * written here once; metrics.ts builds the registry from this table and
 * docs/observability.md describes each entry.
 *
 * Labels come only from `METRIC_LABELS`, and each takes values from a
 * bounded set (22 performatives, a handful of HTTP verbs, the RPCs, status
 * codes, four member states) except `agent_id`, whose series are removed when the agent is
 * undeployed. Per Prometheus naming, `_total` is on counters and only on them
 * (`promtool check metrics` enforces it).
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { isPerformative } from '../bus/performatives.js';
import { API_SPANS } from './span-names.js';

/** The only label names a `svc_*` metric may carry. */
export const METRIC_LABELS = ['agent_type', 'agent_id', 'message_type', 'method', 'state', 'status'] as const;
export type MetricLabel = (typeof METRIC_LABELS)[number];

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricSpec {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly labels: readonly MetricLabel[];
  readonly buckets?: readonly number[];
}

/** Agent executions: fuel-bounded and usually sub-millisecond, cut at `execution_timeout` (30 s by default). */
export const EXECUTION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30] as const;
/** Management calls and message handling: milliseconds usually, a deploy's compile up to seconds. */
export const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

export const METRICS = {
  // Runtime
  agentsDeployed: { name: 'svc_agents_total', type: 'counter', help: 'Agents deployed on this node since it started.', labels: [] },
  agentsActive: { name: 'svc_agents_active', type: 'gauge', help: 'Agents deployed now and neither stopped nor failed.', labels: [] },
  agentStates: { name: 'svc_agents', type: 'gauge', help: 'Agents on this node by lifecycle state (starting, running, executing, hibernated, restarting, stopping, stopped, failed).', labels: ['state'] },
  agentRestarts: { name: 'svc_agent_restarts_total', type: 'counter', help: 'Agent restarts: after a crash (decided by the agent supervisor) and those an operator asked for (RestartAgent).', labels: [] },
  agentUpdates: { name: 'svc_agent_updates_total', type: 'counter', help: 'Module updates (UpdateAgent) that replaced an agent\'s module, by status (success, or error for one refused or failed that left the agent as it was).', labels: ['status'] },
  agentRollbacks: { name: 'svc_agent_rollbacks_total', type: 'counter', help: 'Updated agents that crashed within their rollback window and got their previous module and state back.', labels: [] },
  agentExecutions: { name: 'svc_agent_executions_total', type: 'counter', help: 'Executions of agent handle functions, by status (success or error).', labels: ['status'] },
  agentExecutionDuration: {
    name: 'svc_agent_execution_duration_seconds',
    type: 'histogram',
    help: 'Wall-clock time of one execution of an agent handle function.',
    labels: [],
    buckets: EXECUTION_BUCKETS,
  },
  wasmMemory: { name: 'svc_wasm_memory_usage_bytes', type: 'gauge', help: 'Linear memory of each deployed agent, in bytes.', labels: ['agent_id'] },
  agentThrottled: {
    name: 'svc_agent_throttled_seconds_total',
    type: 'counter',
    help: 'Time each agent was held back by cpu_quota_per_agent with messages waiting, in seconds: a throttled agent shows running while this grows.',
    labels: ['agent_id'],
  },
  runtimeMemory: { name: 'svc_runtime_memory_usage_bytes', type: 'gauge', help: 'Resident memory of the server process, agents and workers included, in bytes.', labels: [] },
  runtimeCpu: { name: 'svc_runtime_cpu_usage_ratio', type: 'gauge', help: 'Share of the machine\'s CPU capacity the server process used over the last few seconds (0 to 1).', labels: [] },
  // Messaging
  messagesSent: { name: 'svc_messages_sent_total', type: 'counter', help: 'Messages accepted by the bus, from clients and agents, by message type.', labels: ['message_type'] },
  messagesReceived: { name: 'svc_messages_received_total', type: 'counter', help: 'Messages handed to an agent\'s handle function, by message type.', labels: ['message_type'] },
  messageProcessingDuration: {
    name: 'svc_message_processing_duration_seconds',
    type: 'histogram',
    help: 'Time from the bus accepting a message to the receiving agent finishing its handling.',
    labels: [],
    buckets: REQUEST_BUCKETS,
  },
  messageQueueSize: { name: 'svc_message_queue_size', type: 'gauge', help: 'Messages waiting in agent mailboxes.', labels: [] },
  messageQueueBytes: {
    name: 'svc_message_queue_bytes',
    type: 'gauge',
    help: 'Bytes of the messages waiting in all agent mailboxes together, as counted against runtime.max_queued_bytes.',
    labels: [],
  },
  messageErrors: { name: 'svc_message_errors_total', type: 'counter', help: 'Messages that could not be delivered or handled, by message type.', labels: ['message_type'] },
  // HTTP API (REST gateway and WebSocket streams)
  httpRequests: { name: 'svc_http_requests_total', type: 'counter', help: 'REST requests answered, by HTTP method and status code.', labels: ['method', 'status'] },
  httpRequestDuration: {
    name: 'svc_http_request_duration_seconds',
    type: 'histogram',
    help: 'Time to answer a REST request, by HTTP method.',
    labels: ['method'],
    buckets: REQUEST_BUCKETS,
  },
  httpActiveConnections: { name: 'svc_http_active_connections', type: 'gauge', help: 'Open connections to the HTTP listener.', labels: [] },
  websocketConnections: { name: 'svc_websocket_connections', type: 'gauge', help: 'Open WebSocket message streams.', labels: [] },
  // gRPC API
  grpcRequests: { name: 'svc_grpc_requests_total', type: 'counter', help: 'gRPC calls finished, by RPC method and gRPC status.', labels: ['method', 'status'] },
  grpcRequestDuration: {
    name: 'svc_grpc_request_duration_seconds',
    type: 'histogram',
    help: 'Time to finish a unary gRPC call, by RPC method.',
    labels: ['method'],
    buckets: REQUEST_BUCKETS,
  },
  grpcActiveStreams: { name: 'svc_grpc_active_streams', type: 'gauge', help: 'Open gRPC SubscribeMessages streams.', labels: [] },
  // System
  diskUsage: { name: 'svc_disk_usage_bytes', type: 'gauge', help: 'Disk space used by the data directory (SQLite file, module blobs), in bytes.', labels: [] },
  networkBytes: { name: 'svc_network_bytes_total', type: 'counter', help: 'Bytes received and sent on HTTP listener connections.', labels: [] },
  fileDescriptors: { name: 'svc_file_descriptors', type: 'gauge', help: 'File descriptors open in the server process.', labels: [] },
  // Cluster
  clusterMembers: { name: 'svc_cluster_members', type: 'gauge', help: 'Members of the cluster as this node sees them, itself included, by state (alive, suspect, dead, left).', labels: ['state'] },
  clusterMessagesForwarded: { name: 'svc_cluster_messages_forwarded_total', type: 'counter', help: 'Messages this node sent on to another node for a receiver there.', labels: [] },
  clusterFailovers: { name: 'svc_cluster_failovers_total', type: 'counter', help: 'Agents of a dead node this node started in its place.', labels: [] },
} as const satisfies Record<string, MetricSpec>;

export type MetricKey = keyof typeof METRICS;

/** `status` of `svc_agent_executions_total`. */
export const EXECUTION_STATUS = { success: 'success', error: 'error' } as const;
export type ExecutionStatus = keyof typeof EXECUTION_STATUS;

/** `method` of the HTTP metrics; anything else is `OTHER`, so a client cannot invent series. */
const HTTP_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
export const OTHER = 'OTHER';

export function httpMethodLabel(method: string): string {
  const upper = method.toUpperCase();
  return HTTP_METHODS.has(upper) ? upper : OTHER;
}

/** `message_type`: one of the 22 performatives, or `other` (an agent's invalid output line). */
export function messageTypeLabel(messageType: string): string {
  return isPerformative(messageType) ? messageType : 'other';
}

/** `status` of the gRPC metrics: the status name (`OK`, `NOT_FOUND`), as grpc-js spells it. */
export function grpcStatusLabel(code: number): string {
  return GrpcStatus[code] ?? 'UNKNOWN';
}

const RPC_NAMES: ReadonlySet<string> = new Set(Object.keys(API_SPANS));

/** `method` of the gRPC metrics: the RPC name from a path like `/svc.v1.ManagementService/DeployAgent`, or `OTHER`. */
export function grpcMethodLabel(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return RPC_NAMES.has(name) ? name : OTHER;
}
