/**
 * Every span name and span attribute key the server uses. Dashboards and
 * trace queries are built on these names (issue 5 makes them a public
 * contract), so they are written here once and documented in
 * docs/observability.md; code never spells a span name inline.
 */

/** Spans of the management API, one per call, whichever door (gRPC or REST) it came through. */
export const API_SPANS = {
  DeployAgent: 'svc.api.deploy_agent',
  UndeployAgent: 'svc.api.undeploy_agent',
  ListAgents: 'svc.api.list_agents',
  GetAgent: 'svc.api.get_agent',
  RestartAgent: 'svc.api.restart_agent',
  UpdateAgent: 'svc.api.update_agent',
  GetAgentLogs: 'svc.api.get_agent_logs',
  FollowAgentLogs: 'svc.api.follow_agent_logs',
  SendMessage: 'svc.api.send_message',
  CallAgent: 'svc.api.call_agent',
  SubscribeMessages: 'svc.api.subscribe_messages',
  Health: 'svc.api.health',
  Metrics: 'svc.api.metrics',
  ListMembers: 'svc.api.list_members',
  /** REST only: the plain `GET /agents/{id}/messages` (recent messages). */
  RecentMessages: 'svc.api.recent_messages',
} as const;

export type ApiOperation = keyof typeof API_SPANS;

/** Spans inside the server, children of an API span or of a message's trace. */
export const SPANS = {
  /** Child of `svc.api.deploy_agent`: the allowlist decoder and instrumentation of the module. */
  wasmValidate: 'svc.wasm.validate',
  /** Child of `svc.api.deploy_agent`: the agent actor and its first instance. */
  runtimeCreate: 'svc.runtime.create',
  /** Child of `svc.api.deploy_agent`: the stored record and the registry entry. */
  registryRegister: 'svc.registry.register',
  /** Child of `svc.api.deploy_agent` (and of other calls that publish): the lifecycle event on the bus. */
  eventsEmit: 'svc.events.emit',
  /** One message accepted by the bus, from a client or an agent; parent: the API span or the sending agent's execution. */
  messagesSend: 'svc.messages.send',
  /** One execution of an agent's `handle` for one message; parent: that message's `svc.messages.send`. */
  agentExecute: 'svc.agent.execute',
} as const;

/**
 * Attribute keys. OpenTelemetry semantic-convention names where one exists
 * (`rpc.*`, `http.*`), `svc.*` for the server's own concepts.
 */
export const SPAN_ATTRIBUTES = {
  rpcSystem: 'rpc.system',
  rpcService: 'rpc.service',
  rpcMethod: 'rpc.method',
  grpcStatusCode: 'rpc.grpc.status_code',
  httpMethod: 'http.request.method',
  httpRoute: 'http.route',
  httpStatusCode: 'http.response.status_code',
  agentId: 'svc.agent.id',
  agentName: 'svc.agent.name',
  moduleSha256: 'svc.module.sha256',
  moduleSize: 'svc.module.size',
  messageId: 'svc.message.id',
  messageType: 'svc.message.type',
  messageSender: 'svc.message.sender',
  messageReceiver: 'svc.message.receiver',
  conversationId: 'svc.message.conversation_id',
  eventType: 'svc.event.type',
  executionStatus: 'svc.execution.status',
  errorCode: 'svc.error.code',
  clientTraceId: 'svc.client.trace_id',
} as const;

/** `rpc.system` of the gRPC door; the REST door sets the HTTP attributes instead. */
export const RPC_SYSTEM_GRPC = 'grpc';
/** `rpc.service` of every management call. */
export const RPC_SERVICE = 'svc.v1.ManagementService';
