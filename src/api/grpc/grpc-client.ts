/**
 * A small promise-based client of `svc.v1.ManagementService`, for the CLI
 * and for clients written in TypeScript. A failed call rejects with a
 * `RemoteError` carrying the server's `svc.v1.Error`.
 */
import {
  Metadata,
  credentials,
  loadPackageDefinition,
  type CallOptions,
  type ChannelCredentials,
  type ClientOptions,
  type ClientReadableStream,
  type ServiceClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import type { Agent, AgentLogLine, ClusterMember, HealthResponse, MetricsSummary } from '../../agents/agent-service-types.js';
import type { ErrorCode } from '../../errors/svc-error.js';
import type { ApiKeyInfo, AuditRecordJson, IssuedKey } from '../../security/security-service-types.js';
import type { TokenPair } from '../../security/token-service.js';
import { TRACE_ID_HEADER } from '../../telemetry/trace-context.js';
import { loadManagementProto, MANAGEMENT_SERVICE_NAME, type ErrorBody } from '../proto.js';
import { errorFromStatus } from './grpc-errors.js';
import type { ProtoMessage } from './grpc-translate.js';

/** A failed call: the server's error, or one made up from the gRPC status when it sent none. */
export class RemoteError extends Error {
  override readonly name = 'RemoteError';
  readonly code: ErrorCode;
  readonly grpcCode: number;

  constructor(readonly body: ErrorBody & { code: ErrorCode }, grpcCode: number) {
    super(body.message);
    this.code = body.code;
    this.grpcCode = grpcCode;
  }
}

export function remoteError(error: ServiceError): RemoteError {
  return new RemoteError(errorFromStatus(error), error.code);
}

export interface DeployInput {
  name: string;
  wasm_module: Uint8Array;
  capabilities?: string[];
  resources?: { memory_limit?: number; cpu_shares?: number };
}

/** What a client may set on a message it sends; the server assigns the rest. */
/** `svc.v1.UpdateAgentRequest`: `agent_id` and at least one change. */
export interface UpdateAgentInput {
  agent_id: string;
  wasm_module?: Uint8Array;
  capabilities?: string[];
  resources?: { memory_limit?: number; cpu_shares?: number };
  keep_state?: boolean;
  rollback_window?: string;
}

export type MessageInput = Partial<Omit<ProtoMessage, 'message_id' | 'created_at'>> & { receiver: string; message_type: string };

export interface CallSettings {
  /** Milliseconds the call may take; none by default. */
  timeoutMs?: number;
  /** Sent as `x-trace-id`. */
  traceId?: string;
}

/** What every call of a client presents (DESIGN.md section 9). */
export interface ClientCredentials {
  /** Sent as `x-api-key`. */
  apiKey?: string;
  /** Sent as `authorization: Bearer <token>`. */
  token?: string;
}

export interface AuditFilter {
  event?: string;
  principal?: string;
  /** RFC 3339. */
  since?: string;
  limit?: number;
}

export interface GrpcClient {
  deploy(input: DeployInput, settings?: CallSettings): Promise<{ agent_id: string }>;
  undeploy(agentId: string, settings?: CallSettings): Promise<void>;
  list(request?: { page_size?: number; page_token?: string }, settings?: CallSettings): Promise<{ agents: Agent[]; next_page_token: string; unreachable_nodes: string[] }>;
  get(agentId: string, settings?: CallSettings): Promise<Agent>;
  restart(agentId: string, settings?: CallSettings): Promise<Agent>;
  update(request: UpdateAgentInput, settings?: CallSettings): Promise<Agent>;
  send(message: MessageInput, settings?: CallSettings): Promise<{ message_id: string }>;
  /** Sends and waits for the reply (`timeoutMs` 0: the server's default). */
  call(message: MessageInput, timeoutMs?: number, settings?: CallSettings): Promise<ProtoMessage>;
  /** A live stream; cancel it with `call.cancel()` (its 'error' then reports CANCELLED). */
  subscribe(filter?: { agent_id?: string; message_types?: string[] }, settings?: CallSettings): ClientReadableStream<ProtoMessage>;
  logs(agentId: string, limit?: number, settings?: CallSettings): Promise<{ lines: AgentLogLine[] }>;
  /** The agent's log lines from now on; cancel it with `call.cancel()`. */
  followLogs(agentId: string, settings?: CallSettings): ClientReadableStream<AgentLogLine>;
  health(settings?: CallSettings): Promise<HealthResponse>;
  metrics(settings?: CallSettings): Promise<MetricsSummary>;
  listMembers(settings?: CallSettings): Promise<{ members: ClusterMember[] }>;
  createToken(request?: { grant_type?: string; client_id?: string; client_secret?: string }, settings?: CallSettings): Promise<TokenPair>;
  refreshToken(refreshToken: string, settings?: CallSettings): Promise<TokenPair>;
  createKey(request: { name: string; roles: string[]; expires_in?: number; rate_limit_per_hour?: number }, settings?: CallSettings): Promise<IssuedKey>;
  listKeys(settings?: CallSettings): Promise<{ keys: ApiKeyInfo[] }>;
  revokeKey(keyId: string, settings?: CallSettings): Promise<ApiKeyInfo>;
  rotateKey(keyId: string, settings?: CallSettings): Promise<IssuedKey>;
  listAudit(filter?: AuditFilter, settings?: CallSettings): Promise<{ records: AuditRecordJson[] }>;
  systemConfig(settings?: CallSettings): Promise<{ settings: Record<string, string>; lockdown: boolean }>;
  setLockdown(enabled: boolean, settings?: CallSettings): Promise<{ enabled: boolean }>;
  close(): void;
}

type UnaryMethod = (request: unknown, metadata: Metadata, options: CallOptions, callback: (error: ServiceError | null, value?: unknown) => void) => void;
type StreamMethod = (request: unknown, metadata: Metadata, options: CallOptions) => ClientReadableStream<ProtoMessage>;

function clientConstructor(): ServiceClientConstructor {
  let node: unknown = loadPackageDefinition(loadManagementProto().packageDefinition);
  for (const part of MANAGEMENT_SERVICE_NAME.split('.')) node = (node as Record<string, unknown>)[part];
  return node as ServiceClientConstructor;
}

function callArgs(settings: CallSettings = {}, presented: ClientCredentials = {}): [Metadata, CallOptions] {
  const metadata = new Metadata();
  if (settings.traceId !== undefined) metadata.set(TRACE_ID_HEADER, settings.traceId);
  if (presented.apiKey !== undefined) metadata.set('x-api-key', presented.apiKey);
  if (presented.token !== undefined) metadata.set('authorization', `Bearer ${presented.token}`);
  const options: CallOptions = settings.timeoutMs === undefined ? {} : { deadline: Date.now() + settings.timeoutMs };
  return [metadata, options];
}

/**
 * `address` is `host:port`; the connection is made on the first call. The
 * options may carry client interceptors (the CLI's credentials); plaintext
 * unless `channelCredentials` say TLS. `presented` is a credential sent with
 * every call.
 */
export function createGrpcClient(
  address: string,
  options: ClientOptions = {},
  channelCredentials: ChannelCredentials = credentials.createInsecure(),
  presented: ClientCredentials = {},
): GrpcClient {
  const Client = clientConstructor();
  const client = new Client(address, channelCredentials, options);
  const methods = client as unknown as Record<string, unknown>;

  function unary<Res>(method: string, request: unknown, settings?: CallSettings): Promise<Res> {
    const [metadata, options] = callArgs(settings, presented);
    return new Promise((resolve, reject) => {
      (methods[method] as UnaryMethod).call(client, request, metadata, options, (error, value) => (error ? reject(remoteError(error)) : resolve(value as Res)));
    });
  }

  return {
    deploy: (input, settings) => unary('DeployAgent', input, settings),
    undeploy: async (agentId, settings) => {
      await unary('UndeployAgent', { agent_id: agentId }, settings);
    },
    list: (request = {}, settings) => unary('ListAgents', request, settings),
    get: (agentId, settings) => unary('GetAgent', { agent_id: agentId }, settings),
    restart: (agentId, settings) => unary('RestartAgent', { agent_id: agentId }, settings),
    update: (request, settings) => unary('UpdateAgent', request, settings),
    send: (message, settings) => unary('SendMessage', { message }, settings),
    call: (message, timeoutMs = 0, settings) => unary('CallAgent', { message, timeout_ms: timeoutMs }, settings),
    subscribe: (filter = {}, settings) => {
      const [metadata, options] = callArgs(settings, presented);
      return (methods.SubscribeMessages as StreamMethod).call(client, { filter }, metadata, options);
    },
    logs: (agentId, limit = 0, settings) => unary('GetAgentLogs', { agent_id: agentId, limit }, settings),
    followLogs: (agentId, settings) => {
      const [metadata, options] = callArgs(settings, presented);
        return (methods.FollowAgentLogs as StreamMethod).call(client, { agent_id: agentId }, metadata, options) as unknown as ClientReadableStream<AgentLogLine>;
    },
    health: (settings) => unary('Health', {}, settings),
    metrics: (settings) => unary('Metrics', {}, settings),
    listMembers: (settings) => unary('ListMembers', {}, settings),
    createToken: (request = {}, settings) => unary('CreateToken', request, settings),
    refreshToken: (refreshToken, settings) => unary('RefreshToken', { refresh_token: refreshToken }, settings),
    createKey: (request, settings) => unary('CreateKey', request, settings),
    listKeys: (settings) => unary('ListKeys', {}, settings),
    revokeKey: (keyId, settings) => unary('RevokeKey', { key_id: keyId }, settings),
    rotateKey: (keyId, settings) => unary('RotateKey', { key_id: keyId }, settings),
    listAudit: (filter = {}, settings) => unary('ListAudit', filter, settings),
    systemConfig: (settings) => unary('GetSystemConfig', {}, settings),
    setLockdown: (enabled, settings) => unary('SetLockdown', { enabled }, settings),
    close: () => client.close(),
  };
}
